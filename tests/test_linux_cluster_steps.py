"""A cluster of Linux nodes sharing a LUN: the procedure never tells them of a Windows folder
(C:\\ClusterStorage\\VolumeN is where a Windows failover cluster mounts its shared volumes)."""
from __future__ import annotations

from topology import methodology as M
from topology.fileformat import loads

BED = """format_version: 1
bed: {name: Debian pair sharing a LUN}
servers:
  - {id: deb1, role: application, os: Debian GNU/Linux 12 (bookworm), platform: linux}
  - {id: deb2, role: application, os: Debian GNU/Linux 12 (bookworm), platform: linux}
arrays:
  - id: array1
    model: Linux SCSI target framework (tgt)
    connectivity: iscsi
    volumes:
      - {name: shared, size_gb: 0.1, serial: beaf11DRIVE}
    host_groups: [{name: cluster}]
    hosts:
      - {name: deb1, server: deb1, host_group: cluster}
      - {name: deb2, server: deb2, host_group: cluster}
    mappings:
      - {volume: shared, to: cluster, lun: 1}
clusters:
  - {id: debclu, nodes: [deb1, deb2], shared_volumes: ['array1:shared']}
"""


def _csv_step(text: str):
    steps = [s for s in M.generate(loads(text, "clu.yaml")).steps() if s.template.endswith("cluster.yaml#csv")]
    assert len(steps) == 1
    return steps[0]


def test_a_linux_clusters_shared_volume_is_not_given_a_windows_folder():
    plain = _csv_step(BED.replace("DRIVE", ""))
    assert "ClusterStorage" not in plain.text and plain.text.endswith("of debclu.")
    mounted = _csv_step(BED.replace("DRIVE", ", drive: /srv/shared"))
    assert "it is mounted as /srv/shared" in mounted.text
    windows = _csv_step(BED.replace("DRIVE", "").replace("Debian GNU/Linux 12 (bookworm), platform: linux",
                                                         "Windows Server 2012 R2, platform: windows"))
    assert "C:\\ClusterStorage\\Volume1" in windows.text
