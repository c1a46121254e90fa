"""Branch lifecycle: rename and deletion protection (PATCH), promote and demote, safe migrations, the
schema of a branch and its lint (read from the server, dataplane/schema.py), and DDL through the control API (run on the
server in the branch's schema, as a MySQL connection runs it).

Mixed into state.World: every public method runs under its lock.
"""

from .models import Branch, BranchUpdate, LintError, SchemaTable
from .records import BranchRecord, DatabaseRecord, OrgRecord, Paging, Principal, Window, locked, not_found, stamp
from .records import unprocessable, window
from ..dataplane.schema import plain_html, run_statements, tables_of


class BranchLifecycle:
    """World methods of a branch's lifecycle and schema."""

    def _ready_branch(self, org: OrgRecord, database: str, name: str, action: str) -> BranchRecord:
        branch = self.find_branch(org, database, name)
        if not branch.settle(self.now()).ready:
            raise unprocessable(f"Branch {name!r} is not ready yet: it cannot {action}")
        return branch

    @locked
    def update_branch(self, org: OrgRecord, database: str, name: str, body: BranchUpdate) -> Branch:
        db = self.find_database(org, database)
        branch = self.find_branch(org, database, name)
        model = branch.model
        if body.new_name is not None and body.new_name != name:
            if body.new_name in db.branches:
                raise unprocessable(f"Name has already been taken: branch {body.new_name!r} exists")
            self._rename(db, branch, body.new_name)
        if body.deletion_protected is not None:
            model.deletion_protected = body.deletion_protected
        model.updated_at = stamp(self.now())
        return branch.settle(self.now())

    def _rename(self, db: DatabaseRecord, branch: BranchRecord, new: str) -> None:
        old = branch.model.name
        db.branches = {(new if key == old else key): value for key, value in db.branches.items()}
        model = branch.model
        model.name = new
        model.url = f"{db.model.branches_url}/{new}"
        model.html_url = f"{db.model.html_url}/{new}"
        for other in db.branches.values():
            if other.model.parent_branch == old:
                other.model.parent_branch = new
        if db.model.default_branch == old:
            db.model.default_branch = new
        self.branch_renamed(db, old, new)

    @locked
    def promote_branch(self, org: OrgRecord, database: str, name: str) -> Branch:
        branch = self._ready_branch(org, database, name, "be promoted")
        model = branch.model
        if not model.production:
            model.production = model.has_replicas = True
            model.vtgate_count = max(model.vtgate_count, 2)
            model.updated_at = stamp(self.now())
        return branch.settle(self.now())

    @locked
    def demote_branch(self, org: OrgRecord, database: str, name: str) -> Branch:
        db = self.find_database(org, database)
        branch = self.find_branch(org, database, name)
        model = branch.model
        if model.production:
            if db.model.default_branch == name:
                raise unprocessable(f"Branch {name!r} is the database's default branch and cannot be demoted")
            model.production = model.has_replicas = model.safe_migrations = False
            model.vtgate_count = 1
            model.updated_at = stamp(self.now())
            self.data_safe_migrations_changed(branch)
        return branch.settle(self.now())

    @locked
    def set_safe_migrations(self, org: OrgRecord, database: str, name: str, enabled: bool) -> Branch:
        branch = self.find_branch(org, database, name)
        model = branch.model
        if enabled and not model.safe_migrations:
            errors = self.keyspace_lint(branch)  # every keyspace's (world/keyspaces.py)
            if errors:
                listed = "; ".join(f"table `{e['table_name']}`: {e['lint_error']}: {e['error_description']} "
                                   f"({e['docs_url']})" for e in errors)
                raise unprocessable(f"Safe migrations cannot be enabled on branch {name!r} while its schema has "
                                    f"lint errors: {listed}")
        if model.safe_migrations != enabled:
            model.safe_migrations = enabled
            model.updated_at = stamp(self.now())
            self.data_safe_migrations_changed(branch)  # an admin's direct DDL: refused under safe migrations
        return branch.settle(self.now())

    @locked
    def branch_schema(self, org: OrgRecord, database: str, name: str, keyspace: str | None) -> list[SchemaTable]:
        """The tables of every keyspace of the branch (the default keyspace's first), or of the one named."""
        branch = self.find_branch(org, database, name)
        if branch.model.kind == "postgresql":
            if keyspace is not None:
                raise not_found("Keyspace")
            return []
        if keyspace is not None and keyspace not in branch.keyspaces:
            raise not_found("Keyspace")
        names = [keyspace] if keyspace is not None else self.keyspace_names(branch)
        return [SchemaTable(name=table, html=plain_html(raw), raw=raw)
                for each in names for table, raw in self.keyspace_tables(branch, each)]

    @locked
    def branch_lint(self, org: OrgRecord, database: str, name: str, paging: Paging) -> Window[LintError]:
        branch = self.find_branch(org, database, name)
        return window([LintError(**error) for error in self.keyspace_lint(branch)], paging)

    @locked
    def apply_branch_ddl(self, organization: str, database: str, name: str, statements: list[str],
                         keyspace: str | None = None) -> dict:
        """DDL on a branch, run on the server in the branch's schema (the keyspace's, when named) as a MySQL
        connection runs it (in order; the first statement the server refuses stops the batch, its message the
        422's): refused on a branch with safe migrations."""
        org = self.orgs.get(organization)
        if org is None:
            raise not_found("Organization")
        db = self.find_database(org, database)
        branch = self.find_branch(org, database, name)
        if branch.model.safe_migrations:
            raise unprocessable(f"Branch {name!r} has safe migrations enabled: direct DDL is refused, "
                                "make the change on a development branch and deploy it with a deploy request")
        if branch.model.kind == "postgresql":
            raise unprocessable(f"Branch {name!r} is a PostgreSQL branch: its schema changes through a connection")
        schema = self.made_schema(branch) if keyspace is None else self.made_keyspace_schema(branch, keyspace)
        try:
            run_statements(self.data, schema, statements)
        finally:
            branch.model.schema_last_updated_at = stamp(self.now())
            self.recheck(db, name)
        return {"branch": name, "tables": tables_of(self.data, schema),
                "lint_errors": len(self.keyspace_lint(branch, keyspace or db.model.name))}
