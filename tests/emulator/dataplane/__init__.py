"""The real servers behind the world: the MariaDB and PostgreSQL servers and the ``World``'s hooks into them
(servers.py), branch schemas read from MariaDB's catalogs and their three-way merge (schema.py), the MySQL edge
(edge.py) and the PgBouncers (pgbouncer.py)."""
