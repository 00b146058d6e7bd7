"""Storage paths worked out from the drawing: for each host and each volume it is given,
every path with every hop.

A path is an initiator port (a server's iSCSI port or FC HBA port, or a VM's iSCSI vNIC,
which leaves the host through its virtual switch's uplinks) and an array target port that
the cabling joins (directly, or through switches and their ISLs / stacks / LAGs), that
share a subnet and VLAN or a declared route (iSCSI) or a zone (FC, when the fabric declares
zones), and on which the array presents the volume to the host (LUN masking).

The bed's explicit `paths:` are pins: a lab that logs in to only some portals writes them,
and for that host and array they replace what the drawing would give.  A pin is checked
hop by hop; one the cabling, subnets, zoning or masking cannot carry is reported with the
hop that fails (PATH-006) and carries nothing.  Where the bed does not state a pinned
path's cabling at all (no cable on that end), the pin is trusted for that hop: the
report the bed comes from states the sessions, not the cables.  A cable the drawn bed has
and a scenario takes out (its far end failed or excluded) is stated, and gone: the pin
carries nothing in that scenario.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Any

from topology.graph import PathAnalyzer, controller_node
from topology.index import BedIndex, PortRef
from topology.model import VM, Bed, PathSpec, StorageArray
from topology.path_checks import Masking, Presented, Zoning, layer3, network_gap
from topology.path_parts import Endpoint, Hop, PinFailure, StoragePath, derived_spec, port_protocol, protocol_not_stated
from topology.unknown import NOT_STATED

# a pair's answer: (index of the exit port, switches crossed, ("", "")) when it carries a path,
# else (None, (), (the initiator it was worked out for, "" when its ports alike get the same words; why not))
Verdict = tuple[int | None, tuple[str, ...], tuple[str, str]]
# (initiator's position, target, exit, switches crossed, volume -> LUN, the hops after the exit port)
PlanEntry = tuple[int, "Endpoint", int, tuple[str, ...], Mapping[str, "int | None"], tuple["Hop", ...]]


class PathDerivation:
    """Every path of one bed (a scenario's view or the reference), worked out once."""

    def __init__(self, idx: BedIndex, analyzer: PathAnalyzer | None = None, drawn: Bed | None = None):
        """`drawn`: the bed as drawn, when `idx` is a scenario's view of it (which unplugs cables)."""
        self.idx = idx
        self._drawn_ends: frozenset[str] | None = None if drawn is None or drawn is idx.bed else \
            frozenset(end for lk in drawn.links for end in (lk.a, lk.b))
        self.analyzer = analyzer or PathAnalyzer(idx)
        self.masking = Masking(idx)
        self.zoning = Zoning(idx, self.analyzer._component)
        self.paths: list[StoragePath] = []
        self.failed_pins: list[PinFailure] = []
        self._failed_pins_by_host: tuple[int, dict[str, list[PinFailure]]] = (0, {})
        self._host_entries: dict[str, dict[Any, list[Any]] | None] = {}
        self.open_fabrics: dict[int, set[str]] = {}      # fabric -> FC paths' switches in it
        self._endpoints: dict[str, list[Endpoint]] = {}
        self._targets: dict[str, list[Endpoint]] = {}
        self._pair_cache: dict[tuple[Any, str, bool], Verdict] = {}
        self._middles: dict[tuple[tuple[str, ...], str], tuple[Hop, ...]] = {}
        self._route_cache: dict[tuple[frozenset[str], frozenset[str]], tuple[str, ...] | None] = {}
        self._tails: dict[tuple[str, tuple], tuple[Hop, ...]] = {}
        self._frozen_attach: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {}
        self._sig_ids: dict[Any, int] = {}
        self._plans: dict[tuple, list[PlanEntry]] = {}
        self._derive()

    # ------------------------------------------------------------------ endpoints
    def endpoints(self, comp: str) -> list[Endpoint]:
        hit = self._endpoints.get(comp)
        if hit is None:
            hit = self._endpoints[comp] = self._endpoints_now(comp)
        return hit

    def _endpoints_now(self, comp: str) -> list[Endpoint]:
        idx = self.idx
        out: list[Endpoint] = []
        server = idx.servers.get(comp)
        if server is not None:
            ports = idx.server_ports(server)
            bound_nics = guest_only = None
            idx_ports = idx.ports
            for ref, port in ports:
                roles = port.roles
                if port.kind == "ethernet" and "iscsi" not in roles and "fc" not in roles:
                    continue    # a LAN, heartbeat or unused port (port_protocol gives '')
                if bound_nics is None:      # (worked out at the first SAN port: most servers bind none)
                    bound_nics = {p.bound_to for _, p in ports if p.bound_to}
                    guest_only = self._guest_uplinks.get(server.id)
                if bound_nics and ref in bound_nics:
                    continue    # it carries the interfaces bound to it; it is no initiator itself
                if guest_only and ref in guest_only and port.address == "":
                    continue    # it carries its guests' sessions, with no address of the host's own
                pr = idx_ports.get(ref)
                if pr is None:
                    continue
                # port_protocol, inline for the common case (an iSCSI Ethernet port)
                proto = "iscsi" if port.kind == "ethernet" and "iscsi" in roles and "fc" not in roles \
                    and "unused" not in roles and pr.port is port else port_protocol(pr)
                if not proto:
                    continue
                bound = port.bound_to if pr.port is port else getattr(pr.port, "bound_to", "")
                if bound:   # port binding: the interface sends through the physical port it is bound to
                    out.append(self._endpoint(ref, pr.port, proto, (bound,),
                                              (Hop("iface", ref, f"iSCSI interface {ref}"),)))
                else:
                    out.append(self._endpoint(ref, pr.port, proto, (ref,)))
            return out
        vm = idx.vms.get(comp)
        if vm is not None:
            for n in vm.nics:
                ref = f"{vm.id}:{n.name}"
                pr = idx.port(ref)
                if pr is None or port_protocol(pr) != "iscsi":
                    continue
                out.append(self._vnic_endpoint(ref, n, "iscsi"))
        return out

    @cached_property
    def _guest_uplinks(self) -> dict[str, set[str]]:
        """Server id -> uplinks of its virtual switches not shared with the management OS (guest traffic)."""
        found: dict[str, set[str]] = {}
        for vs in self.idx.bed.virtual_switches:
            if not vs.management_os and type(vs.uplinks) is list and type(vs.host) is str:
                found.setdefault(vs.host, set()).update(vs.uplinks)
        return found

    def _vnic_endpoint(self, ref: str, nic: Any, proto: str) -> Endpoint:
        """A VM's initiator: the vNIC, its virtual switch, and the uplinks its traffic leaves by."""
        vs = self.idx.vswitches.get(nic.vswitch)
        uplinks = tuple(vs.uplinks) if vs is not None else ()
        if nic.vswitch is NOT_STATED or vs is not None and vs.uplinks is NOT_STATED:
            uplinks = (ref,)    # how it leaves the host is not stated: like a port with no cable
        lead = (Hop("vnic", ref),) + ((Hop("vswitch", vs.id, f"virtual switch {vs.id}"),) if vs else ())
        return self._endpoint(ref, nic, proto, uplinks, lead)

    def _endpoint(self, ref: str, port: Any, proto: str, exits: tuple[str, ...],
                  lead: tuple[Hop, ...] = ()) -> Endpoint:
        frozen = self._frozen_attach
        attach = []
        for e in exits:
            hit = frozen.get(e)
            if hit is None:
                sw, direct = self.analyzer.attached(e)
                hit = frozen[e] = (e, frozenset(sw), frozenset(direct))
            attach.append(hit)
        l3 = layer3(self.idx, port) if proto == "iscsi" else None
        # FC zoning and SAS cabling name the port itself; iSCSI looks only at where it is plugged and addressed
        looks: tuple
        if l3 is not None and l3.subnet:
            shape = ((attach[0][1], attach[0][2]),) if len(attach) == 1 else tuple([(a[1], a[2]) for a in attach])
            looks = (proto, shape, (l3.subnet, l3.network, l3.vlan), bool(lead))
            if self._drawn_ends is not None:    # an end unplugged by the scenario is not one never cabled
                looks += (tuple(self._unplugged(e) for e in exits),)
        else:
            looks = (proto, ref)
        # a small number stands for the signature: the pair cache hashes it thousands of times
        sigs = self._sig_ids
        sig = sigs.get(looks)
        if sig is None:
            sig = sigs[looks] = len(sigs)
        return Endpoint(ref, port, proto, exits, lead, l3, tuple(attach), sig)

    def targets(self, array_id: str) -> list[Endpoint]:
        hit = self._targets.get(array_id)
        if hit is None and array_id in self.idx.group_views:    # a group's volumes: its members' ports
            hit = self._targets[array_id] = [t for a in self.idx.group_members(array_id) for t in self.targets(a.id)]
        if hit is None:
            array = self.idx.arrays[array_id]
            hit = []
            for ref, p, _ in self.idx.array_ports(array):
                pr = self.idx.ports.get(ref)
                proto = port_protocol(pr) if pr is not None else ""
                if proto:
                    hit.append(self._endpoint(ref, p, proto, (ref,)))
            self._targets[array_id] = hit
        return hit

    # ------------------------------------------------------------------ one pair
    def carry(self, ini: Endpoint, tgt: Endpoint, pinned: bool = False) -> tuple[tuple[Hop, ...] | None, str]:
        """(the hops from initiator to target port, '') or (None, the first hop that fails)."""
        exit_at, switches, gap = self._verdict(ini, tgt, pinned)
        if exit_at is None:
            if gap[0] and gap[0] != ini.ref:   # worked out for a look-alike port: say it of this one
                gap = (ini.ref, self._carry_now(ini, tgt, pinned)[2][1])
            return None, gap[1]
        return self._hops(ini, tgt, exit_at, switches), ""

    def _verdict(self, ini: Endpoint, tgt: Endpoint, pinned: bool) -> Verdict:
        """Whether the pair carries a path, cached per kind of initiator: ports cabled to the same
        switches on the same subnet and VLAN get the same answer from a target."""
        key = (ini.sig, tgt.ref, pinned)
        hit = self._pair_cache.get(key)
        if hit is None:
            hit = self._pair_cache[key] = self._carry_now(ini, tgt, pinned)
        return hit

    def _hops(self, ini: Endpoint, tgt: Endpoint, exit_at: int, switches: tuple[str, ...],
              middle: tuple[Hop, ...] | None = None) -> tuple[Hop, ...]:
        """`middle`: the hops after the exit port when the caller has them (`_middle`)."""
        exit_ref = ini.exits[exit_at]
        if middle is None:
            middle = self._middle(switches, tgt)
        if ini.lead:
            word = "bound to" if ini.lead[0].kind == "iface" else "uplink"
            return ini.lead + (Hop("port", exit_ref, f"{word} {exit_ref}"),) + middle
        return (Hop("port", exit_ref),) + middle

    def _middle(self, switches: tuple[str, ...], tgt: Endpoint) -> tuple[Hop, ...]:
        """The hops from the first switch to the target port."""
        middle = self._middles.get((switches, tgt.ref))
        if middle is None:
            group = self.group_of(tgt.ref) if tgt.proto == "iscsi" else None
            portal = (Hop("portal", group.name, f"discovery at group {group.name} ({group.address})"),) \
                if group is not None and group.address else ()
            middle = self._middles[(switches, tgt.ref)] = (
                tuple(Hop("switch", s) for s in switches) + portal + (Hop("target", tgt.ref),))
        return middle

    def _carry_now(self, ini: Endpoint, tgt: Endpoint, pinned: bool) -> Verdict:
        def fail(text: str) -> Verdict:
            return None, (), (ini.ref, text)
        if ini.proto != tgt.proto:
            return fail(f"{ini.ref} is an {ini.proto} port and {tgt.ref} an {tgt.proto} port")
        if not ini.exits:
            return fail(f"{ini.ref} is on no virtual switch with an uplink")
        route = self._cabling(ini, tgt, pinned)
        if isinstance(route, str):
            if ini.attach[0][1] and route.startswith(_NO_JOIN):     # (14,048 pins of the 5,000-device bed)
                return None, (), ("", route)   # said of the switches, which ports alike share: said of each
            return fail(route)
        exit_ref, switches = route
        if ini.proto == "iscsi":
            assert ini.l3 is not None and tgt.l3 is not None
            gap = self._discovery_gap(ini, tgt) or network_gap(self.idx, ini.ref, ini.l3, tgt.ref, tgt.l3)
            if gap:
                return fail(gap)
        elif ini.proto == "fc":
            gap, open_fabric = self.zoning.gap(switches, ini.ref, ini.port, tgt.ref, tgt.port)
            if gap:
                return fail(gap)
            if open_fabric is not None:
                self.open_fabrics.setdefault(open_fabric, set()).update(switches)
        return ini.exits.index(exit_ref), switches, ("", "")

    def group_of(self, target_ref: str) -> Any:
        """The array group (discovery address) of the array a target port belongs to, or None."""
        pr = self.idx.ports.get(target_ref)
        array = pr.device if pr is not None else None
        name = getattr(array, "group", "") if isinstance(array, StorageArray) else ""
        return self.idx.array_groups.get(name) if name else None

    def _discovery_gap(self, ini: Endpoint, tgt: Endpoint) -> str | None:
        """Why the initiator cannot discover its target through the group address, or None: sessions
        are redirected to member ports only after discovery on the group's own address."""
        group = self.group_of(tgt.ref)
        if group is None or not group.address:
            return None     # no group address (or not stated): discovery is not held against the path
        assert ini.l3 is not None
        gap = network_gap(self.idx, ini.ref, ini.l3, f"group {group.name}", layer3(self.idx, group))
        return f"{ini.ref} cannot discover group {group.name} at {group.address}: {gap}" if gap else None

    def _cabling(self, ini: Endpoint, tgt: Endpoint, pinned: bool) -> tuple[str, tuple[str, ...]] | str:
        """(the exit port, the switches crossed) or why the cabling does not join the two."""
        _, tgt_sw, tgt_direct = tgt.attach[0]
        uncabled = []
        for exit_ref, sw, direct in ini.attach:
            if tgt.ref in direct or exit_ref in tgt_direct:
                return exit_ref, ()
            if not sw and not direct:
                uncabled.append(exit_ref)
        tgt_uncabled = not tgt_sw and not tgt_direct
        if pinned and (len(uncabled) == len(ini.exits) or tgt_uncabled):
            cut = [ref for ref in (uncabled if len(uncabled) == len(ini.exits) else []) +
                   ([tgt.ref] if tgt_uncabled else []) if self._unplugged(ref)]
            if cut:
                return f"the scenario takes out the cable of {' and '.join(cut)} (its far end failed or is left out)"
            return ini.exits[0], ()     # the bed states no cabling for this end: trust the pin
        if len(uncabled) == len(ini.exits):
            return f"{', '.join(uncabled)} has no cable"
        if tgt_uncabled:
            return f"{tgt.ref} has no cable"
        best: tuple[str, ...] | None = None
        best_exit = ""
        for exit_ref, sw, _ in ini.attach:
            r = self._switch_route(sw, tgt_sw)
            if r is not None and (best is None or len(r) < len(best)):
                best, best_exit = r, exit_ref
        if best is None:
            first = ", ".join(sorted(ini.attach[0][1])) or ini.exits[0]
            return f"{_NO_JOIN}{first} to {', '.join(sorted(tgt_sw)) or tgt.ref}"
        return best_exit, best

    def _unplugged(self, ref: str) -> bool:   # cabled in the drawn bed (the view has no cable for it)
        return self._drawn_ends is not None and ref in self._drawn_ends

    def _switch_route(self, ini_sw: frozenset[str], tgt_sw: frozenset[str]) -> tuple[str, ...] | None:
        """The shortest switch route between two sets of switches (cached: hosts share a few switch pairs)."""
        key = (ini_sw, tgt_sw)
        if key in self._route_cache:
            return self._route_cache[key]
        best: tuple[str, ...] | None = None
        common = ini_sw & tgt_sw
        if common:
            best = (min(common),)
        else:
            for a in sorted(ini_sw):
                for b in sorted(tgt_sw):
                    r = self.analyzer._switch_route(a, b)
                    if r is not None and (best is None or len(r) < len(best)):
                        best = tuple(r)
        self._route_cache[key] = best
        return best

    # ------------------------------------------------------------------ the bed
    def _derive(self) -> None:
        pins: dict[tuple[str, str], list[tuple[int, PathSpec]]] = {}
        for i, p in enumerate(self.idx.bed.paths):
            tgt = self.idx.port(p.target)
            array = self.idx.storage_owner(tgt.device) if tgt is not None and isinstance(tgt.device, StorageArray) \
                else ""
            pins.setdefault((p.host, array), []).append((i, p))
        for comp in sorted(self.masking.presented):
            by_array: dict[str, list[Presented]] = {}
            for pres in self.masking.of(comp).values():
                by_array.setdefault(pres.array, []).append(pres)
            for array_id, presented in sorted(by_array.items()):
                if (comp, array_id) not in pins:
                    self._derive_host_array(comp, array_id, presented)
        for (_host, array_id), items in pins.items():
            for i, p in items:
                self._check_pin(i, p, array_id)

    def _derive_host_array(self, comp: str, array_id: str, presented: list[Presented]) -> None:
        inis = self.endpoints(comp)
        allowed = self.masking.initiators.get((array_id, comp))
        if allowed is not None:
            plan = self._plan(inis, array_id, presented, allowed)
        else:   # hosts whose initiators look alike to the array get the same plan (a rack of them)
            # presentations are the masking's own objects, one for the hosts a mapping reaches alike
            key = (tuple([ini.sig for ini in inis]), array_id, tuple([id(pr) for pr in presented]))
            shared = self._plans.get(key)
            if shared is None:
                shared = self._plans[key] = self._plan(inis, array_id, presented, None)
            plan = shared
        append = self.paths.append
        exit_hops: dict[tuple[int, int], tuple[Hop, ...]] = {}   # an initiator has paths to several targets
        for at, tgt, exit_at, switches, luns, after in plan:
            ini = inis[at]
            spec = derived_spec(comp, ini.ref, tgt.ref, ini.proto, list(luns))
            if ini.lead:
                hops = self._hops(ini, tgt, exit_at, switches, after)
            else:       # _hops, for the common case: a physical initiator port
                first = exit_hops.get((at, exit_at))
                if first is None:
                    first = exit_hops[(at, exit_at)] = (Hop("port", ini.exits[exit_at]),)
                hops = first + after
            append(StoragePath(spec, hops, False, luns))

    def _plan(self, inis: list[Endpoint], array_id: str, presented: list[Presented],
              allowed: frozenset[str] | None) -> list[PlanEntry]:
        """(initiator's position, target, exit, switches crossed, volume -> LUN, the hops after the exit
        port) of each path a host's initiators have to an array."""
        targets = self.targets(array_id)
        # the volumes presented on each target port (most are presented on every port)
        everywhere = [pr for pr in presented if not pr.ports]
        on_ports = [pr for pr in presented if pr.ports]
        plan: list[PlanEntry] = []
        for at, ini in enumerate(inis):
            if allowed is not None and not set(ini.exits) & allowed and ini.ref not in allowed:
                continue
            for tgt in targets:
                exit_at, switches, _ = self._verdict(ini, tgt, False)
                if exit_at is None:
                    continue
                vols = [pr for pr in presented if not pr.ports or tgt.ref in pr.ports] if on_ports else everywhere
                if vols:
                    plan.append((at, tgt, exit_at, switches, MappingProxyType({v.volume: v.lun for v in vols}),
                                 self._middle(switches, tgt) + self._tail(tgt, vols)))
        return plan

    def _first_gap(self, comp: str, array_id: str) -> str:
        """The first hop that fails for a host and an array, in the order a lab engineer checks."""
        inis = self.endpoints(comp)
        if not inis:
            return f"{comp} has no iSCSI or FC port"
        allowed = self.masking.initiators.get((array_id, comp))
        presented = [pr for pr in self.masking.of(comp).values() if pr.array == array_id]
        for ini in inis:
            if allowed is not None and not set(ini.exits) & allowed and ini.ref not in allowed:
                return f"{ini.ref} is not an initiator of {comp}'s host entry on {array_id}"
            for tgt in self.targets(array_id):
                hops, gap = self.carry(ini, tgt)
                if hops is None:
                    return gap
                if not any(not pr.ports or tgt.ref in pr.ports for pr in presented):
                    return f"{array_id} presents none of {comp}'s volumes on {tgt.ref}"
        return f"{array_id} has no iSCSI or FC port for {comp}" if not self.targets(array_id) else \
            f"no initiator of {comp} reaches a port of {array_id}"

    def _add(self, comp: str, ini: Endpoint, tgt: Endpoint, hops: tuple[Hop, ...],
             vols: list[Presented], pinned: bool, spec: PathSpec | None = None) -> None:
        luns = {v.volume: v.lun for v in vols}
        tail = self._tail(tgt, vols)
        if spec is None:
            spec = PathSpec(host=comp, initiator=ini.ref, target=tgt.ref, kind=ini.proto,
                            volumes=[v.volume for v in vols])
        else:
            spec = PathSpec(host=spec.host, initiator=spec.initiator, target=spec.target, kind=spec.kind,
                            volumes=[v.volume for v in vols], multipath=spec.multipath,
                            persistent=spec.persistent, preferred=spec.preferred)
        self.paths.append(StoragePath(spec, hops + tail, pinned, luns))

    def _tail(self, tgt: Endpoint, vols: list[Presented]) -> tuple[Hop, ...]:
        """The hops after a target port: its controller, then each volume as a LUN."""
        key = (tgt.ref, tuple((v.volume, v.lun) for v in vols))
        tail = self._tails.get(key)
        if tail is None:
            pr = self.idx.ports.get(tgt.ref)
            parts: list[Hop] = []
            if pr is not None and pr.controller is not None:
                parts.append(Hop("controller", controller_node(pr.device.id, pr.controller.name),
                                 f"controller {pr.controller.name}"))
            for v in vols:
                parts.append(Hop("lun", v.volume, f"{v.volume} (LUN {v.lun})" if v.lun is not None else v.volume))
            tail = self._tails[key] = tuple(parts)
        return tail

    def _check_pin(self, i: int, p: PathSpec, array_id: str) -> None:
        idx = self.idx
        ini_pr, tgt_pr = idx.port(p.initiator), idx.port(p.target)
        if ini_pr is None or tgt_pr is None or not array_id:
            self.failed_pins.append(PinFailure(i, p, p.target, f"{p.target} is not an array port"))
            return
        ini = next((e for e in self.endpoints(p.host) if e.ref == p.initiator), None)
        if ini is None and ini_pr.device.id == p.host and protocol_not_stated(ini_pr):
            ini = self._pinned_endpoint(ini_pr, p.kind)
        if ini is None:
            owner = ini_pr.device.id
            roles = ", ".join(getattr(ini_pr.port, "roles", ()) or ()) or "none"
            why = (f"{p.initiator} belongs to {owner}, not {p.host}" if owner != p.host
                   else f"{p.initiator} is not an iSCSI or FC port (roles: {roles})")
            self.failed_pins.append(PinFailure(i, p, p.initiator, why))
            return
        tgt = next((e for e in self.targets(array_id) if e.ref == p.target), None)
        if tgt is None and protocol_not_stated(tgt_pr):
            tgt = self._endpoint(p.target, tgt_pr.port, p.kind, (p.target,))
        if tgt is None:
            self.failed_pins.append(PinFailure(i, p, p.target, f"{p.target} is not an iSCSI or FC port"))
            return
        hops, gap = self.carry(ini, tgt, pinned=True)
        if hops is None:
            self.failed_pins.append(PinFailure(i, p, self._failing_hop(gap, p), gap))
            return
        presented = self.masking.of(p.host)
        if p.volumes:
            vols, refused = [], []
            for v in p.volumes:
                pres = presented.get(v)
                if pres is None:
                    refused.append(self.masking.why_not(p.host, v))
                elif pres.ports and p.target not in pres.ports:
                    refused.append(f"{pres.array} presents {v} to {p.host} on {', '.join(sorted(pres.ports))}, "
                                   f"not on {p.target}")
                else:
                    vols.append(pres)
            for why in refused:
                self.failed_pins.append(PinFailure(i, p, "masking", why))
        else:
            vols = [pres for pres in presented.values()
                    if pres.array == array_id and (not pres.ports or p.target in pres.ports)]
            if not vols:
                self.failed_pins.append(PinFailure(i, p, "masking",
                                                   f"{array_id} presents no volume to {p.host} on {p.target}"))
        if vols:
            self._add(p.host, ini, tgt, hops, vols, pinned=True, spec=p)

    @staticmethod
    def _failing_hop(gap: str, p: PathSpec) -> str:
        if "cannot discover" in gap:
            return "discovery"
        if "no cable" in gap or "switch link" in gap:
            return "cabling"
        if "subnet" in gap or "VLAN" in gap:
            return "network"
        if "zone" in gap:
            return "zoning"
        return p.initiator

    def _pinned_endpoint(self, pr: PortRef, proto: str) -> Endpoint:
        """A pinned initiator whose kind or roles the source does not state: the pin says what it carries."""
        if isinstance(pr.device, VM):
            return self._vnic_endpoint(pr.ref, pr.port, proto)
        bound = pr.port.bound_to
        if bound:
            return self._endpoint(pr.ref, pr.port, proto, (bound,),
                                  (Hop("iface", pr.ref, f"iSCSI interface {pr.ref}"),))
        return self._endpoint(pr.ref, pr.port, proto, (pr.ref,))

    def unstated_inputs(self, comp: str, array_id: str) -> list[str]:
        """The values the paths between a host (or VM) and an array depend on that the source does
        not state: which of its ports are SAN ports, the array's ports, its host entry on the array."""
        idx = self.idx
        out: list[str] = []
        server, vm = idx.servers.get(comp), idx.vms.get(comp)
        out += self.unstated_cabling(comp, array_id)
        if server is not None:
            out += [f"{ref} {w}" for ref, p in idx.server_ports(server) for w, v in
                    (("kind", p.kind), ("roles", p.roles), ("iSCSI binding", p.bound_to)) if v is NOT_STATED]
        elif vm is not None:
            out += [f"{vm.id} host"] if vm.host is NOT_STATED else []
            for n in vm.nics:
                out += [f"{vm.id}:{n.name} {w}" for w, v in (("role", n.role), ("virtual switch", n.vswitch))
                        if v is NOT_STATED]
                vs = idx.vswitches.get(n.vswitch)
                out += [f"virtual switch {vs.id} uplinks"] if vs is not None and vs.uplinks is NOT_STATED else []
        array = idx.arrays.get(array_id)
        if array is not None:
            serving = idx.group_members(array_id) if array_id in idx.group_views else [array]
            out += [f"{ref} {w}" for a in serving for ref, p, _ in idx.array_ports(a) for w, v in
                    (("kind", p.kind), ("roles", p.roles)) if v is NOT_STATED]
            if array_id in idx.group_views:
                out += [f"group {array_id} pool {p.name} members" for p in array.pools if p.members is NOT_STATED]
            group = idx.array_groups.get(array.group) if array.group else None
            out += [f"group {group.name} address"] if group is not None and group.address is NOT_STATED else []
            for h in self._host_entries_of(array, comp):
                out += [f"{array_id} host {h.name} {w}" for w, v in
                        (("server", h.server), ("host group", h.host_group), ("initiators", h.initiators))
                        if v is NOT_STATED]
        return out

    def _host_entries_of(self, array: Any, comp: str) -> list[Any]:
        """The array's host entries for `comp` and those whose server is not stated, in the array's
        order: looked up, not walked (an array of a big bed has hundreds of entries, asked about
        for each of its hosts)."""
        if array.id not in self._host_entries:
            by: dict[Any, list[Any]] | None = None
            if not any(h.server is NOT_STATED for h in array.hosts):
                by = {}
                for h in array.hosts:
                    by.setdefault(h.server, []).append(h)
            self._host_entries[array.id] = by
        by_server = self._host_entries[array.id]
        if by_server is None:           # the not-stated ones keep their places among the others
            return [h for h in array.hosts if h.server == comp or h.server is NOT_STATED]
        return by_server.get(comp, [])

    def unstated_cabling(self, comp: str, array_id: str) -> list[str]:
        """The host's and the array's (or its group members') ports whose cable's far end the source
        does not state: which target ports the host reaches then depends on them."""
        idx, far = self.idx, self.analyzer.unstated_far_ends
        if not far:
            return []
        server, vm = idx.servers.get(comp), idx.vms.get(comp)
        out = [f"where {ref}'s cable goes" for ref, p in idx.server_ports(server)
               if ref in far and not _lan_only(p)] if server else []
        if vm is not None:      # a guest's sessions leave by its virtual switches' uplinks
            ups = [u for n in vm.nics if (vs := idx.vswitches.get(n.vswitch)) is not None
                   and isinstance(vs.uplinks, list) for u in vs.uplinks]
            out += [f"where {ref}'s cable goes" for ref in dict.fromkeys(ups) if ref in far]
        array = idx.arrays.get(array_id)
        if array is not None:
            serving = idx.group_members(array_id) if array_id in idx.group_views else [array]
            out += [f"where {ref}'s cable goes" for a in serving for ref, _, _ in idx.array_ports(a) if ref in far]
        return out

    # ------------------------------------------------------------------ questions
    def why_no_path(self, host: str, volume: str) -> str:
        """The first hop that fails between a host and a volume it uses (for a path count of 0)."""
        array_id = volume.partition(":")[0]
        if volume not in self.masking.of(host):
            return self.masking.why_not(host, volume)
        pinned = [f for f in self._failed_pins_of(host) if array_id in f.spec.target]
        if pinned:
            return f"its pinned path {pinned[0].spec.initiator} -> {pinned[0].spec.target} fails: {pinned[0].reason}"
        return self._first_gap(host, array_id)

    def _failed_pins_of(self, host: str) -> list[PinFailure]:
        """The failed pins of one host, in their order: PATH-001 asks once per host and volume, and a
        walk over every failed pin each time grew with the square of the bed (6 of the 9 s a
        validation of the canvas benchmark's 5,000-device bed took)."""
        counted, by_host = self._failed_pins_by_host
        if counted != len(self.failed_pins):
            by_host = {}
            for f in self.failed_pins:
                by_host.setdefault(f.spec.host, []).append(f)
            self._failed_pins_by_host = (len(self.failed_pins), by_host)
        return by_host.get(host, [])


_NO_JOIN = "no cable or switch link joins "
_NOT_STORAGE = frozenset({"lan", "management", "heartbeat", "live_migration", "unused", "replication"})


def _lan_only(port: Any) -> bool:
    """A port whose stated roles carry no storage traffic (no iSCSI, FC or guest traffic)."""
    roles = port.roles
    return isinstance(roles, list) and bool(roles) and port.kind != "fc" and set(roles) <= _NOT_STORAGE
