"""The platform's state and rules: the ``World`` (state.py) with its records, settings and clock (records.py), the
resources' models (models.py), one ``World`` mixin per group of resources (access.py, backups.py, deploys.py...),
the OAuth authority (oauth.py) and the seeded world (seed.py, seed_access.py)."""
