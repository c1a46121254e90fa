# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the database module and the branches inventory share: the rule for a database's name. What the IP restriction
modules share: the sentence for a database that is not a PostgreSQL database."""

from __future__ import annotations

import re

from ansible_collections.planetscale.cloud.plugins.module_utils.base import ModuleFailure
from ansible_collections.planetscale.cloud.plugins.module_utils.errors import ApiError

# The platform's rule for the name of a new database (as for a branch); it refuses any other name with 422.
NEW_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")


def refuse_mysql_restrictions(module, error):
    """Raise a sentence when the API refused a database's IP restrictions (404, 422) and the database (option database)
    exists and is not a PostgreSQL database; otherwise return, and the API's answer stands."""
    if error.status not in (404, 422):
        return
    try:
        database = module.client.get(module.org_path("databases", module.params["database"]), missing_ok=True)
        kind = database.get("kind") if isinstance(database, dict) else None
        if isinstance(database, dict) and not kind and database.get("default_branch"):  # records that lack kind
            branch = module.client.get(module.org_path("databases", module.params["database"], "branches",
                                                       database["default_branch"]), missing_ok=True)
            kind = branch.get("kind") if isinstance(branch, dict) else None
    except ApiError:
        return
    if kind and kind != "postgresql":
        raise ModuleFailure("Database %r is a %s database: IP restrictions are for PostgreSQL databases; restrict "
                            "where a password logs in from with the cidrs of planetscale.cloud.password." % (
                                module.params["database"], "MySQL" if kind == "mysql" else kind),
                            status=error.status, error=error.as_dict())
