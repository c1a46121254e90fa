# -*- coding: utf-8 -*-
# Copyright: planetscale.cloud contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""planetscale.cloud.webhook: the name the event source planetscale.cloud.webhook_deliveries had before, kept for the
rulebooks that use it. ansible-rulebook 1.3 and later never load this file: extensions/eda/eda_runtime.yml redirects
the name (and ansible-rulebook warns of it); an older one runs this file, which warns once and runs the source."""

from __future__ import annotations

import logging
import os
import runpy
from typing import Any

DOCUMENTATION = r"""
---
short_description: Deprecated name of planetscale.cloud.webhook_deliveries.
description:
  - The event source C(planetscale.cloud.webhook_deliveries) under the name it had before, so that it is not taken
    for the module M(planetscale.cloud.webhook). It takes the same options; rename it in the rulebook.
deprecated:
  why: The name was the module's, which manages webhooks; the source receives their deliveries.
  alternative: planetscale.cloud.webhook_deliveries
  removed_in: 2.0.0
"""

logger = logging.getLogger(__name__)
SOURCE = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "webhook_deliveries.py"))


async def main(queue: Any, args: dict[str, Any]) -> None:
    """The source planetscale.cloud.webhook_deliveries, after a warning that this name is deprecated."""
    logger.warning("planetscale.cloud.webhook is deprecated and will be removed in planetscale.cloud 2.0.0: name the "
                   "event source planetscale.cloud.webhook_deliveries in the rulebook (it takes the same options)")
    await SOURCE["main"](queue, args)
