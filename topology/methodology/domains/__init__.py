"""The domains a template's `foreach` can name, one module per section of the procedure.

Importing a section's module registers its domains; they are imported in the order a lab builds a bed in.
"""
# the import order is the order the domains are registered and listed in: keep it
# isort: off
from topology.methodology.domains import hardware  # noqa: F401  (blade chassis: blades and I/O modules)
from topology.methodology.domains import hosts  # noqa: F401  (each import registers that section's domains)
from topology.methodology.domains import network  # noqa: F401
from topology.methodology.domains import switches  # noqa: F401
from topology.methodology.domains import storage  # noqa: F401
from topology.methodology.domains import vendor  # noqa: F401  (zones on switches, array initiators)
from topology.methodology.domains import connectivity  # noqa: F401
from topology.methodology.domains import iscsi_setup  # noqa: F401  (ifaces, array-group discovery)
from topology.methodology.domains import cluster  # noqa: F401
from topology.methodology.domains import vms  # noqa: F401
from topology.methodology.domains import workloads  # noqa: F401
from topology.methodology.domains import run  # noqa: F401
from topology.methodology.domains import run_changes  # noqa: F401
# isort: on
from topology.methodology.domains.registry import DOMAINS, GLOBAL_NAMES, WILDCARDS, Domain, Item, domain_reference

__all__ = ["DOMAINS", "GLOBAL_NAMES", "WILDCARDS", "Domain", "Item", "domain_reference"]
