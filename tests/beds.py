"""A small, correct iSCSI bed that the rule tests break one thing at a time.  It pins no
`paths:`: its eight iSCSI sessions follow from the cabling, subnets and LUN masking."""
from __future__ import annotations

from topology.fileformat import loads
from topology.model import Bed

CLEAN_BED = """\
format_version: 1
bed:
  name: two-node iSCSI cluster
networks:
  - {id: lan, cidr: 10.0.0.0/24, role: lan}
  - {id: san-a, cidr: 10.1.0.0/24, role: iscsi, mtu: 9000, cluster_use: none}
  - {id: san-b, cidr: 10.2.0.0/24, role: iscsi, mtu: 9000, cluster_use: none}
  - {id: hb, cidr: 10.3.0.0/24, role: heartbeat, cluster_use: cluster_only}
servers:
  - id: h1
    role: hypervisor
    cpu: {sockets: 2, cores_per_socket: 4, threads_per_core: 2}
    memory_gb: 48
    numa_nodes: 2
    multipath: MPIO/DSM
    adapters:
      - name: nic
        ports:
          - {name: lan, roles: [lan], address: 10.0.0.11/24, network: lan}
          - {name: vm, roles: [vm]}
          - {name: hb, roles: [heartbeat], address: 10.3.0.11/24, network: hb}
          - {name: lm, roles: [live_migration]}
          - {name: san1, roles: [iscsi], address: 10.1.0.11/24, network: san-a, mtu: 9000, flow_control: true}
          - {name: san2, roles: [iscsi], address: 10.2.0.11/24, network: san-b, mtu: 9000, flow_control: true}
  - id: h2
    role: hypervisor
    cpu: {sockets: 2, cores_per_socket: 4, threads_per_core: 2}
    memory_gb: 48
    numa_nodes: 2
    multipath: MPIO/DSM
    adapters:
      - name: nic
        ports:
          - {name: lan, roles: [lan], address: 10.0.0.12/24, network: lan}
          - {name: vm, roles: [vm]}
          - {name: hb, roles: [heartbeat], address: 10.3.0.12/24, network: hb}
          - {name: lm, roles: [live_migration]}
          - {name: san1, roles: [iscsi], address: 10.1.0.12/24, network: san-a, mtu: 9000, flow_control: true}
          - {name: san2, roles: [iscsi], address: 10.2.0.12/24, network: san-b, mtu: 9000, flow_control: true}
switches:
  - {id: sw-a, model: iSCSI switch A, port_count: 24, mtu: 9216, flow_control: true}
  - {id: sw-b, model: iSCSI switch B, port_count: 24, mtu: 9216, flow_control: true}
  - {id: sw-lan, model: LAN switch, port_count: 24}
arrays:
  - id: arr
    model: dual-controller iSCSI array
    controllers:
      - name: c0
        ports:
          - {name: c0-a, roles: [iscsi], address: 10.1.0.101/24, network: san-a, mtu: 9000}
          - {name: c0-b, roles: [iscsi], address: 10.2.0.101/24, network: san-b, mtu: 9000}
      - name: c1
        ports:
          - {name: c1-a, roles: [iscsi], address: 10.1.0.102/24, network: san-a, mtu: 9000}
          - {name: c1-b, roles: [iscsi], address: 10.2.0.102/24, network: san-b, mtu: 9000}
    enclosures:
      - name: e0
        slots: 12
        disks:
          - {slots: 0-11, size_gb: 600, rpm: 15000, media: hdd, interface: sas}
    disk_groups:
      - {name: data, raid: raid10, members: [e0:0-3], owner: c0}
      - {name: logs, raid: raid1, members: [e0:4-5], owner: c1}
      - {name: os, raid: raid5, members: [e0:6-10], owner: c0}
    spares: [e0:11]
    volumes:
      - {name: db, group: data, size_gb: 500, purpose: [database]}
      - {name: log, group: logs, size_gb: 100, purpose: [log]}
      - {name: witness, group: logs, size_gb: 1, purpose: [witness]}
      - {name: vms, group: os, remainder: true, purpose: [vm]}
    host_groups:
      - {name: cluster}
    hosts:
      - {name: h1, server: h1, host_group: cluster}
      - {name: h2, server: h2, host_group: cluster}
    mappings:
      - {volume: db, to: cluster, lun: 0}
      - {volume: log, to: cluster, lun: 1}
      - {volume: witness, to: cluster, lun: 2}
      - {volume: vms, to: cluster, lun: 3}
links:
  - {a: "h1:san1", b: sw-a}
  - {a: "h1:san2", b: sw-b}
  - {a: "h2:san1", b: sw-a}
  - {a: "h2:san2", b: sw-b}
  - {a: "h1:lan", b: sw-lan}
  - {a: "h2:lan", b: sw-lan}
  - {a: "h1:hb", b: "h2:hb", note: heartbeat crossover}
  - {a: "arr:c0-a", b: sw-a}
  - {a: "arr:c1-a", b: sw-a}
  - {a: "arr:c0-b", b: sw-b}
  - {a: "arr:c1-b", b: sw-b}
clusters:
  - id: cl
    nodes: [h1, h2]
    quorum: node_and_disk_majority
    witness: arr:witness
    shared_volumes: [arr:vms, arr:db, arr:log]
    excluded_networks: [san-a, san-b]
virtual_switches:
  - {id: h1/vm, host: h1, uplinks: ["h1:vm"]}
  - {id: h2/vm, host: h2, uplinks: ["h2:vm"]}
vms:
  - id: sql
    host: h1
    vcpu: 4
    memory_gb: 8
    highly_available: true
    disks:
      - {name: os, size_gb: 40, type: fixed, volume: arr:vms}
      - {name: data, size_gb: 200, type: fixed, volume: arr:db}
    nics: [{name: lan, vswitch: h1/vm}]
  - id: web
    host: h2
    vcpu: 2
    memory_gb: 4
    highly_available: true
    disks:
      - {name: os, size_gb: 40, type: fixed, volume: arr:vms}
    nics: [{name: lan, vswitch: h2/vm}]
workloads:
  - id: oltp
    tool: fio
    targets: [sql]
    demand_iops: 300
    read_pct: 70
    criteria:
      - {metric: read_latency_avg_ms, comparison: "<", threshold: 20, unit: ms}
scenarios:
  - {id: optimized, reference: true}
  - {id: degraded, failed: [h2]}
"""


def clean_bed() -> Bed:
    return loads(CLEAN_BED, "clean.yaml")
