"""Database Traffic Control of PostgreSQL branches: traffic budgets and their rules. World methods (mixed into
state.World: every public method runs under its lock).

A budget has a name (unique in its branch: a second create of a taken name is refused with 422), a mode (enforce,
warn, off; "warn" when the create names none) and optional limits (capacity and burst 0-6000, rate, concurrency and
warning_threshold 0-100; null is unlimited). A rule matches a query pattern (``fingerprint``, with its ``keyspace``)
or SQLCommenter tags: the request gives each tag as a string ``key=value`` (or ``key`` alone: any value, as an
``each`` rule takes it), the record answers ``{key_id, key, value, source}``. A rule is added and removed on its own
(POST .../rules, DELETE .../rules/{id}); a budget cannot hold two rules that match the same thing (422). The
``rules`` a budget create or update may carry (an array of strings in the published OpenAPI, whose meaning it does
not give) are ignored. Budgets live with their branch: a branch deleted and made again has none.

The list filters by ``fingerprint`` (budgets with a rule on that query pattern), as does the query insights
operation (``.../insights/{fingerprint}/traffic/budgets``, with ``keyspace``).
"""

import hashlib
from dataclasses import dataclass, field
from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictInt, StrictStr

from .models import Actor, Body, Record, User
from .records import BranchRecord, OrgRecord, Paging, Window, invalid_params, locked, not_found, stamp, unprocessable
from .records import window

SYSTEM_TAGS = ("application_name", "username", "remote_address")  # tags the platform sets, not the SQL comments
Share = Annotated[StrictInt, Field(ge=0, le=100)]
Seconds = Annotated[StrictInt, Field(ge=0, le=6000)]


class TrafficTag(Record):
    key_id: str
    key: str
    value: str
    source: Literal["sql", "system"]


class TrafficRule(Record):
    record_type: ClassVar[str] = "TrafficRule"

    id: str
    kind: Literal["match", "each"]
    tags: list[TrafficTag]
    fingerprint: str | None = None
    keyspace: str | None = None
    actor: Actor
    syntax_highlighted_sql: str
    created_at: str
    updated_at: str


class TrafficBudget(Record):
    record_type: ClassVar[str] = "TrafficBudget"

    id: str
    name: str
    mode: Literal["enforce", "warn", "off"]
    capacity: int | None = None
    rate: int | None = None
    burst: int | None = None
    concurrency: int | None = None
    warning_threshold: int | None = None
    actor: Actor
    rules: list[TrafficRule]
    created_at: str
    updated_at: str


class BudgetBody(Body):
    name: StrictStr | None = None
    mode: Literal["enforce", "warn", "off"] | None = None
    capacity: Seconds | None = None
    rate: Share | None = None
    burst: Seconds | None = None
    concurrency: Share | None = None
    warning_threshold: Share | None = None
    rules: list[StrictStr] | None = None  # ignored (see the module's docstring)


class RuleBody(Body):
    kind: Literal["match", "each"] = "match"
    keyspace: StrictStr | None = None
    fingerprint: StrictStr | None = None
    tags: list[StrictStr] = []


LIMITS = ("capacity", "rate", "burst", "concurrency", "warning_threshold")


@dataclass
class BudgetRecord:
    model: TrafficBudget
    branch_id: str
    rules: dict[str, TrafficRule] = field(default_factory=dict)

    def render(self) -> TrafficBudget:
        return self.model.model_copy(update={"rules": list(self.rules.values())})


def rule_key(rule: TrafficRule) -> tuple:
    """What a rule matches: two rules of a budget never match the same."""
    return (rule.kind, rule.keyspace or "", rule.fingerprint or "", tuple(sorted((t.key, t.value) for t in rule.tags)))


class TrafficBudgets:
    """World methods of traffic budgets and rules."""

    def _budgets(self, branch: BranchRecord) -> dict[str, BudgetRecord]:
        if not hasattr(self, "traffic_state"):
            self.traffic_state = {}  # branch id -> {budget id -> BudgetRecord}
        return self.traffic_state.setdefault(branch.model.id, {})

    def _traffic_branch(self, org: OrgRecord, database: str, name: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if branch.model.kind != "postgresql":
            raise unprocessable(f"Traffic control is for PostgreSQL branches: {name!r} is a MySQL branch")
        return branch

    def _budget(self, org: OrgRecord, database: str, name: str, budget_id: str) -> BudgetRecord:
        found = self._budgets(self._traffic_branch(org, database, name)).get(budget_id)
        if found is None:
            raise not_found("Traffic budget")
        return found

    @locked
    def traffic_budgets(self, org: OrgRecord, database: str, name: str, paging: Paging,
                        fingerprint: str | None = None, keyspace: str | None = None) -> Window[TrafficBudget]:
        budgets = self._budgets(self._traffic_branch(org, database, name)).values()
        if fingerprint is not None:
            budgets = [b for b in budgets if any(r.fingerprint == fingerprint and keyspace in (None, r.keyspace)
                                                 for r in b.rules.values())]
        return window([b.render() for b in budgets], paging)

    @locked
    def traffic_budget(self, org: OrgRecord, database: str, name: str, budget_id: str) -> TrafficBudget:
        return self._budget(org, database, name, budget_id).render()

    @locked
    def create_traffic_budget(self, org: OrgRecord, database: str, name: str, body: BudgetBody,
                              user: User) -> TrafficBudget:
        budgets = self._budgets(self._traffic_branch(org, database, name))
        if not (body.name or "").strip():
            raise invalid_params("name: a traffic budget needs a name")
        if any(b.model.name == body.name for b in budgets.values()):
            raise unprocessable(f"A traffic budget named {body.name!r} already exists on this branch")
        now = stamp(self.now())
        model = TrafficBudget(id=self.new_id(), name=body.name, mode=body.mode or "warn", actor=user.actor(),
                              rules=[], created_at=now, updated_at=now,
                              **{limit: getattr(body, limit) for limit in LIMITS})
        record = BudgetRecord(model, self.find_branch(org, database, name).model.id)
        budgets[model.id] = record
        return record.render()

    @locked
    def update_traffic_budget(self, org: OrgRecord, database: str, name: str, budget_id: str,
                              body: BudgetBody) -> TrafficBudget:
        record = self._budget(org, database, name, budget_id)
        changes = body.model_dump(exclude_unset=True, exclude={"rules"})
        if "name" in changes:
            if not (changes["name"] or "").strip():
                raise invalid_params("name: a traffic budget needs a name")
            taken = self._budgets(self.find_branch(org, database, name))
            if any(b.model.name == changes["name"] and b is not record for b in taken.values()):
                raise unprocessable(f"A traffic budget named {changes['name']!r} already exists on this branch")
        if changes.get("mode", "") is None:
            del changes["mode"]
        record.model = record.model.model_copy(update=dict(changes, updated_at=stamp(self.now())))
        return record.render()

    @locked
    def delete_traffic_budget(self, org: OrgRecord, database: str, name: str, budget_id: str) -> None:
        self._budget(org, database, name, budget_id)
        del self._budgets(self.find_branch(org, database, name))[budget_id]

    @locked
    def create_traffic_rule(self, org: OrgRecord, database: str, name: str, budget_id: str, body: RuleBody,
                            user: User) -> TrafficRule:
        record = self._budget(org, database, name, budget_id)
        tags = [self._tag(text) for text in body.tags]
        if not tags and not body.fingerprint:
            raise invalid_params("A traffic rule matches a query fingerprint or tags: give at least one")
        if body.keyspace and not body.fingerprint:
            raise invalid_params("keyspace: a keyspace narrows a fingerprint; give the fingerprint too")
        now = stamp(self.now())
        sql = f"<span class=\"fingerprint\">{body.fingerprint}</span>" if body.fingerprint else ""
        rule = TrafficRule(id=self.new_id(), kind=body.kind, tags=tags, fingerprint=body.fingerprint or None,
                           keyspace=body.keyspace or None, actor=user.actor(), syntax_highlighted_sql=sql,
                           created_at=now, updated_at=now)
        if any(rule_key(other) == rule_key(rule) for other in record.rules.values()):
            raise unprocessable("The traffic budget already has a rule that matches the same queries")
        record.rules[rule.id] = rule
        return rule

    @locked
    def delete_traffic_rule(self, org: OrgRecord, database: str, name: str, budget_id: str, rule_id: str) -> None:
        record = self._budget(org, database, name, budget_id)
        if record.rules.pop(rule_id, None) is None:
            raise not_found("Traffic rule")

    @staticmethod
    def _tag(text: str) -> TrafficTag:
        key, _, value = text.partition("=")
        key = key.strip()
        if not key:
            raise invalid_params(f"tags: {text!r} is not key=value")
        key_id = hashlib.sha256(key.encode()).hexdigest()[:12]
        return TrafficTag(key_id=key_id, key=key, value=value.strip(),
                          source="system" if key in SYSTEM_TAGS else "sql")
