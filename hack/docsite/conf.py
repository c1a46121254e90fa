
# ---- appended by hack/docs.sh (make docs): hack/docsite/conf.py ----

# The benchmark report (docs/benchmarks.md, copied in at build time) is Markdown.
extensions.append('myst_parser')  # noqa: F821  (defined above, in sphinx-init's part)
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}

# Offline and reproducible: references into the Ansible documentation resolve through an inventory
# that hack/docsite/ansible_inventory.py writes from the installed ansible-core at build time, never
# one downloaded from docs.ansible.com (nor Python's or Jinja's, which no page refers to).
intersphinx_mapping = {
    'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '../ansible_devel.inv'),
}
