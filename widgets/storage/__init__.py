"""The storage editor: one array at a time — its controllers and ports, the drive-slot map,
and the disk groups, pools, volumes, hosts and mappings built on it.

The user selects disks in the slot map and creates a disk group (RAID level, name, owning
controller), marks hot spares, creates volumes in a group or pool and maps them to hosts or
host groups.  Each action is one `document.apply(edit)` built by `topology.storage_ops`;
a request that cannot work is refused with the reason under the map.  The editor redraws
from the model on `document.changed` / `reset`, follows the shared selection (selecting
``MD3000i:group:SQL`` anywhere highlights its slots) and publishes what the user picks here
(slots, groups, pools, volumes).

`editor.StorageEditor` holds the array chooser, the slot map and the message line; each tab
is its own widget: `disk_groups_tab`, `volumes_tab`, `mappings_tab`, `controllers_tab`.
"""
