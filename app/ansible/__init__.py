"""The Ansible export: a bed's hosts and steps as an inventory and playbooks a lab that already
uses Ansible can run, review and lint.

`inventory` (who and how to reach), `tasks` (one step on one host, by kind), `playbook`
(stages and manual steps as plays), `writer` (the files), `command` (`testbed-studio export-ansible`).
"""
from app.ansible.inventory import inventory_name, reach
from app.ansible.writer import Export, export

__all__ = ["Export", "export", "inventory_name", "reach"]
