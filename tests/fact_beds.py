"""Beds of the two shapes that gave one fact as dozens of findings (issue 31), built here as a
lab engineer would from a report that leaves values out:

* `equallogic_guest_iscsi_bed`: one RHEV/KVM host whose guests reach their LUNs themselves
  (in-guest iSCSI over one 10 GbE uplink) on six 1 GbE EqualLogic members of one group, one
  array port cabled per member, the switch's MTU and one access record not stated, no spares,
  disk sizes not stated.
* `fc_blade_bed`: HS22 blades in a BladeCenter chassis on a DS-series array over two FC switch
  modules; twenty-four arrays (disk groups) from one `disks:` line whose speed is not stated,
  one access LUN whose owner is not stated, production VMs on dynamically expanding VHDs.

Both load through the file format, as a user's file would.
"""
from __future__ import annotations

from topology.fileformat import loads
from topology.model import Bed


def equallogic_guest_iscsi_bed(guests: int = 9, members: int = 6, member_ports: int = 1) -> Bed:
    lines = ["format_version: 1", "bed: {name: RHEV host with in-guest iSCSI on an EqualLogic group}",
             "networks:",
             "  - {id: lan, cidr: 10.0.0.0/24, role: lan}",
             "  - {id: san, cidr: 192.168.10.0/24, role: iscsi, mtu: 9000}",
             "array_groups:",
             "  - {name: eqlgrp, address: 192.168.10.10/24, network: san}",
             "servers:",
             "  - id: r710",
             "    role: hypervisor",
             "    model: Dell PowerEdge R710",
             "    os: Red Hat Enterprise Linux 6.1",
             "    hypervisor: RHEV 3.0",
             "    platform: linux",
             "    cpu: {sockets: 2, cores_per_socket: 4, threads_per_core: not stated}",
             "    memory_gb: 96",
             "    multipath: dm-multipath",
             "    adapters:",
             "      - name: nic",
             "        ports:",
             "          - {name: em1, speed_gbps: 1, roles: [lan, management], address: 10.0.0.11/24, network: lan}",
             "          - {name: p3p1, speed_gbps: 10, roles: [iscsi], mtu: 9000}",
             "switches:",
             "  - {id: sw1, model: Dell PowerConnect 6248, mtu: not stated, flow_control: true}",
             "  - {id: sw2, model: Dell PowerConnect 6248, mtu: not stated, flow_control: true}",
             "  - {id: lan-sw, model: LAN switch}",
             "arrays:"]
    for m in range(1, members + 1):
        lines += [f"  - id: ps{m}",
                  "    model: Dell EqualLogic PS5000XV",
                  "    group: eqlgrp",
                  "    connectivity: iscsi",
                  "    controllers:",
                  "      - name: CM0",
                  "        mode: active",
                  "        ports:",
                  *(f"          - {{name: eth{k}, speed_gbps: 1, roles: [iscsi], "
                    f"address: 192.168.10.{20 + 10 * k + m}/24, network: san, mtu: 9000}}"
                    for k in range(member_ports)),
                  "      - name: CM1",
                  "        mode: standby",
                  "    enclosures:",
                  "      - name: E0",
                  "        slots: 16",
                  "        disks:",
                  "          - {slots: 0-15, size_gb: not stated, rpm: 15000, media: hdd, interface: sas}",
                  "    disk_groups:",
                  "      - {name: raid50, raid: raid50, members: ['E0:0-15'], pool: default}",
                  "    spares: []",
                  "    pools:",
                  "      - {name: default}",
                  "    volumes:"]
        lines += [f"      - {{name: g{g}-data, pool: default, size_gb: 100, purpose: [data]}}"
                  for g in range(1, guests + 1) if g % members == m % members]
        lines += ["    hosts:"]
        lines += [f"      - {{name: g{g}, server: g{g}, initiators: "
                  f"{'not stated' if g == 1 else f'[iqn.1994-05.com.redhat:g{g}]'}}}"
                  for g in range(1, guests + 1) if g % members == m % members]
        lines += ["    mappings:"]
        lines += [f"      - {{volume: g{g}-data, to: g{g}, lun: 0}}" for g in range(1, guests + 1)
                  if g % members == m % members]
    lines += ["links:",
              "  - {a: sw1, b: sw2, kind: stack}",
              "  - {a: 'r710:p3p1', b: sw1}",
              "  - {a: 'r710:em1', b: lan-sw}"]
    lines += [f"  - {{a: 'ps{m}:eth{k}', b: sw{1 + (m + k) % 2}}}" for m in range(1, members + 1)
              for k in range(member_ports)]
    lines += ["virtual_switches:",
              "  - {id: r710/san, host: r710, uplinks: ['r710:p3p1'], role: iscsi}",
              "vms:"]
    for g in range(1, guests + 1):
        member = next(k for k in range(1, members + 1) if g % members == k % members)
        lines += [f"  - id: g{g}",
                  "    host: r710",
                  "    vcpu: 2",
                  "    memory_gb: 4",
                  "    storage_access: guest_iscsi",
                  "    production: true",
                  "    disks:",
                  "      - {name: os, size_gb: 20, type: fixed, local: true}",
                  f"      - {{name: data, size_gb: 100, type: fixed, volume: 'ps{member}:g{g}-data'}}",
                  "    nics:",
                  f"      - {{name: eth1, vswitch: r710/san, role: iscsi, address: 192.168.10.{100 + g}/24, "
                  "network: san, mtu: 9000}"]
    return loads("\n".join(lines) + "\n", "equallogic-guest-iscsi.yaml")


def fc_blade_bed(blades: int = 6, vms_per_blade: int = 3, arrays: int = 24, left_out: str | None = None) -> Bed:
    """`left_out`: a blade whose host entry on the array is in no host group."""
    lines = ["format_version: 1", "bed: {name: BladeCenter HS22 blades on a DS5020 over FC}",
             "networks:",
             "  - {id: lan, cidr: 10.1.0.0/24, role: lan}",
             "  - {id: cluster, cidr: 10.1.1.0/24, role: heartbeat}",
             "chassis:",
             "  - {id: bch, model: IBM BladeCenter H, bays: 14}",
             "servers:"]
    for b in range(1, blades + 1):
        lines += [f"  - id: hs22-{b}",
                  "    role: hypervisor",
                  "    model: IBM BladeCenter HS22",
                  "    chassis: bch",
                  f"    bay: {b}",
                  "    cpu: {sockets: 2, cores_per_socket: 6, threads_per_core: 2}",
                  "    memory_gb: 96",
                  "    numa_nodes: 2",
                  "    os: Windows Server 2008 R2 Enterprise SP1",
                  "    hypervisor: Hyper-V",
                  "    platform: windows",
                  "    multipath: RDAC",
                  "    adapters:",
                  "      - name: Onboard",
                  "        ports:",
                  f"          - {{name: LAN, speed_gbps: 1, roles: [lan, vm, management], address: 10.1.0.{20 + b}/24, "
                  "network: lan}",
                  f"          - {{name: Cluster, speed_gbps: 1, roles: [heartbeat, live_migration], "
                  f"address: 10.1.1.{20 + b}/24, network: cluster}}",
                  "      - name: CIOv",
                  "        kind: fc",
                  "        ports:",
                  f"          - {{name: FC0, kind: fc, speed_gbps: 8, roles: [fc], "
                  f"wwpn: '21:00:00:1b:32:0a:{b:02x}:00', "
                  "fabric: A}",
                  f"          - {{name: FC1, kind: fc, speed_gbps: 8, roles: [fc], "
                  f"wwpn: '21:00:00:1b:32:0a:{b:02x}:01', "
                  "fabric: B}"]
    lines += ["switches:",
              "  - {id: esm-1, model: Ethernet switch module, chassis: bch}",
              "  - {id: esm-2, model: Ethernet switch module, chassis: bch}",
              "  - {id: fcsm-a, kind: fc, model: Brocade 20-port 8Gb SAN Switch Module, chassis: bch, fabric: A}",
              "  - {id: fcsm-b, kind: fc, model: Brocade 20-port 8Gb SAN Switch Module, chassis: bch, fabric: B}",
              "arrays:",
              "  - id: ds5020",
              "    model: IBM System Storage DS5020",
              "    connectivity: fc",
              "    controllers:",
              "      - name: A",
              "        cache_gb: 2",
              "        ports:",
              "          - {name: A1, kind: fc, speed_gbps: 8, roles: [fc], "
              "wwpn: '20:14:00:a0:b8:2a:10:a1', fabric: A}",
              "          - {name: A2, kind: fc, speed_gbps: 8, roles: [fc], "
              "wwpn: '20:24:00:a0:b8:2a:10:a2', fabric: B}",
              "      - name: B",
              "        cache_gb: 2",
              "        ports:",
              "          - {name: B1, kind: fc, speed_gbps: 8, roles: [fc], "
              "wwpn: '20:15:00:a0:b8:2a:10:b1', fabric: A}",
              "          - {name: B2, kind: fc, speed_gbps: 8, roles: [fc], "
              "wwpn: '20:25:00:a0:b8:2a:10:b2', fabric: B}",
              "    enclosures:",
              "      - name: E0",
              f"        slots: {arrays * 2}",
              "        disks:",
              f"          - {{slots: 0-{arrays * 2 - 1}, size_gb: 300, rpm: not stated, media: hdd, interface: fc}}",
              "    disk_groups:"]
    lines += [f"      - {{name: Array{i}, raid: raid1, members: ['E0:{2 * i}-{2 * i + 1}'], owner: {'AB'[i % 2]}}}"
              for i in range(arrays)]
    lines += ["    spares: []",
              "    volumes:",
              "      - {name: Access, group: Array0, size_gb: 0.02, owner: not stated, purpose: [other]}"]
    lines += [f"      - {{name: LUN{i}, group: Array{i}, size_gb: 200, owner: {'AB'[i % 2]}, purpose: [vm]}}"
              for i in range(arrays)]
    lines += ["    host_groups:", "      - {name: HV-Cluster}", "    hosts:"]
    for b in range(1, blades + 1):
        group = "" if f"hs22-{b}" == left_out else ", host_group: HV-Cluster"
        lines += [f"      - {{name: hs22-{b}, server: hs22-{b}{group}, host_type: Windows 2000/Server 2003/Server 2008 "
                  f"Clustered, initiators: ['21:00:00:1b:32:0a:{b:02x}:00', '21:00:00:1b:32:0a:{b:02x}:01']}}"]
    lines += ["    mappings:"]
    lines += [f"      - {{volume: LUN{i}, to: HV-Cluster, lun: {i}}}" for i in range(arrays)]
    lines += ["      - {volume: Access, to: HV-Cluster, lun: 31}",
              "links:"]
    for b in range(1, blades + 1):
        lines += [f"  - {{a: 'hs22-{b}:LAN', b: esm-1}}", f"  - {{a: 'hs22-{b}:Cluster', b: esm-2}}",
                  f"  - {{a: 'hs22-{b}:FC0', b: fcsm-a}}", f"  - {{a: 'hs22-{b}:FC1', b: fcsm-b}}"]
    lines += ["  - {a: 'ds5020:A1', b: fcsm-a}", "  - {a: 'ds5020:B1', b: fcsm-a}",
              "  - {a: 'ds5020:A2', b: fcsm-b}", "  - {a: 'ds5020:B2', b: fcsm-b}",
              "clusters:",
              "  - id: HV-Cluster",
              f"    nodes: [{', '.join(f'hs22-{b}' for b in range(1, blades + 1))}]",
              "    quorum: node_majority",
              f"    shared_volumes: [{', '.join(f'ds5020:LUN{i}' for i in range(arrays))}]",
              "    live_migration_networks: [cluster]",
              "virtual_switches:"]
    lines += [f"  - {{id: hs22-{b}/LAN, host: hs22-{b}, uplinks: ['hs22-{b}:LAN'], role: vm, management_os: true}}"
              for b in range(1, blades + 1)]
    lines += ["vms:"]
    n = 0
    for b in range(1, blades + 1):
        for v in range(vms_per_blade):
            lun = n % arrays
            lines += [f"  - id: vm{b}-{v}",
                      f"    host: hs22-{b}",
                      "    vcpu: 2",
                      "    memory_gb: 4",
                      "    highly_available: true",
                      "    production: true",
                      "    disks:",
                      f"      - {{name: OS, size_gb: 40, format: vhd, type: dynamic, volume: 'ds5020:LUN{lun}'}}",
                      f"      - {{name: Data, size_gb: 100, format: vhd, type: dynamic, volume: 'ds5020:LUN{lun}'}}"]
            n += 1
    return loads("\n".join(lines) + "\n", "fc-blade.yaml")
