# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the database module and the branches inventory share: the rule for a database's name."""

from __future__ import annotations

import re

# The platform's rule for the name of a new database (as for a branch); it refuses any other name with 422.
NEW_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
