# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles of PostgreSQL branches (the credentials of a Postgres database).

A role's secret (``password``) is in the answers of its create, renew and reset only; every read
carries an empty string or nothing there. Role names are not unique on a branch, so a role is
found as a password is (passwords.OwnPasswords): by id, or by the one role of a name. What a role shares with
the other kinds whose secret the API shows once (stripping it, renewal and reset) is shown_once's.
"""

from __future__ import annotations

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.client import ApiError


def not_postgres(module, error):
    """After a 404 or 422 of a roles endpoint: a sentence when the branch exists and is not a PostgreSQL branch
    (a MySQL branch has passwords, not roles); otherwise nothing, and the API's answer stands."""
    if not isinstance(error, ApiError) or error.status not in (404, 422):
        return
    try:
        branch = module.client.get(module.org_path("databases", module.params["database"], "branches",
                                                   module.params["branch"]), missing_ok=True)
    except ApiError:
        return
    kind = branch.get("kind") if isinstance(branch, dict) else None
    if kind and kind != "postgresql":
        raise ModuleFailure("Branch %r of database %r is a %s branch: roles are for PostgreSQL branches; manage its "
                            "credentials with planetscale.cloud.password." % (
                                module.params["branch"], module.params["database"],
                                "MySQL" if kind == "mysql" else kind), status=error.status, error=error.as_dict())
