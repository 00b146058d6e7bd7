# --- Testbed Studio guard (linux-block): the one block device that is the bed's volume, or nothing.
# The disk is selected by the identity the bed states, read the way udev reads it from the device
# (`udevadm info`: ID_WWN_WITH_EXTENSION / ID_SERIAL from SCSI VPD page 0x83, ID_SCSI_SERIAL from
# page 0x80, ID_VENDOR, ID_MODEL, ID_PATH); the paths of one LUN must sit under one multipath map
# (a dm device with DM_UUID mpath-*).  Any doubt stops the step before it writes anything.
# The step sets TB_VOLUME, TB_WWN or TB_SERIAL or TB_TARGET with TB_LUN, TB_MIN_BYTES, TB_MAX_BYTES
# and, when the array family is known, TB_VENDOR and TB_PRODUCT (extended regular expressions).
# an array's length is never read with the length expansion (dollar, brace, hash): Ansible and ansible-lint
# take a brace followed by a hash in a script for the start of a Jinja comment, even in `!unsafe` text
# (ansible/ansible-lint#4647), so the exported playbook would not lint
tb_count() { echo "$#"; }
tb_refuse() {
    echo "refused, nothing was written to ${TB_VOLUME:-the volume}'s disk: $*" >&2
    exit 1
}

tb_norm() {   # a WWN as bare lower-case hex
    local w=${1,,}
    w=${w#0x}; w=${w#naa.}; w=${w#eui.}
    printf '%s' "$w"
}

tb_udev() {   # the identity udev reads for /dev/$1, into U_*
    U_WWN=''; U_WWN16=''; U_IDSERIAL=''; U_SERIAL=''; U_VENDOR=''; U_MODEL=''; U_PATH=''; U_DMUUID=''
    local line key value
    while IFS= read -r line; do
        key=${line%%=*}
        value=${line#*=}
        case $key in
            ID_WWN_WITH_EXTENSION) U_WWN=$value ;;
            ID_WWN) U_WWN16=$value ;;
            ID_SERIAL) U_IDSERIAL=$value ;;
            ID_SCSI_SERIAL) U_SERIAL=$value ;;
            ID_VENDOR) U_VENDOR=$value ;;
            ID_MODEL) U_MODEL=$value ;;
            ID_PATH) U_PATH=$value ;;
            DM_UUID) U_DMUUID=$value ;;
        esac
    done < <(udevadm info --query=property --name="/dev/$1" 2>/dev/null || true)
}

tb_is_volume() {   # whether the device udev just read (U_*) has the volume's identity
    if [ -n "${TB_WWN:-}" ]; then
        local want have
        want=$(tb_norm "$TB_WWN")
        have=$(tb_norm "${U_WWN:-$U_WWN16}")
        [ "$have" = "$want" ] || [ "${U_IDSERIAL,,}" = "3$want" ] || [ "${U_IDSERIAL,,}" = "2$want" ]
    elif [ -n "${TB_SERIAL:-}" ]; then
        [ -n "$U_SERIAL" ] && [ "$U_SERIAL" = "$TB_SERIAL" ]
    elif [ -n "${TB_TARGET:-}" ] && [ -n "${TB_LUN:-}" ]; then
        tb_at_target
    else
        tb_refuse "the step names no WWN, serial, or target and LUN"
    fi
}

tb_at_target() {   # whether the device udev just read (U_PATH) is LUN TB_LUN of TB_TARGET
    # ip-PORTAL-iscsi-TARGET-lun-N or ...-fc-0xWWPN-lun-N: all of TARGET, not its tail (an IQN may
    # itself end in "-iscsi-" and another target's name)
    local path=${U_PATH,,} target=${TB_TARGET,,}
    case $path in
        *-iscsi-*) [ "${path#*-iscsi-}" = "$target-lun-$TB_LUN" ] ;;
        *-fc-0x*) [ "${path##*-fc-0x}" = "${target//:/}-lun-$TB_LUN" ] ;;
        *) return 1 ;;
    esac
}

tb_describe() {   # one device in words, for messages
    local n=$1 bytes=0
    bytes=$(( $(cat "/sys/class/block/$n/size" 2>/dev/null || echo 0) * 512 ))
    tb_udev "$n"
    printf '/dev/%s (%s bytes, %s %s, WWN %s, serial %s)' "$n" "$bytes" "${U_VENDOR:-?}" "${U_MODEL:-?}" \
        "${U_WWN:-${U_WWN16:-none}}" "${U_SERIAL:-none}"
}

tb_select() {   # sets TB_DEVICE to /dev/NAME of the volume, or refuses
    local n paths=() holders=() seen='' vendor='' model='' dev bytes h
    # a bound that is no number makes `[ -lt ]` fail, which an `if` reads as "within the band"
    if ! [[ ${TB_MIN_BYTES:-} =~ ^[0-9]+$ && ${TB_MAX_BYTES:-} =~ ^[0-9]+$ ]]; then
        tb_refuse "the step states no size for the volume (TB_MIN_BYTES ${TB_MIN_BYTES:-unset}, TB_MAX_BYTES ${TB_MAX_BYTES:-unset}): its disk's size cannot be checked"
    fi
    # an identity that is empty once normalised would match every disk that shows none
    if [ -n "${TB_WWN:-}" ] && ! [[ $(tb_norm "$TB_WWN") =~ ^([0-9a-f]{16}|[0-9a-f]{24}|[0-9a-f]{32})$ ]]; then
        tb_refuse "TB_WWN $TB_WWN is no WWN (16, 24 or 32 hex digits, as naa.<hex>, eui.<hex> or 0x<hex>)"
    fi
    for n in /sys/class/block/*; do
        n=${n##*/}
        [ -e "/sys/class/block/$n/partition" ] && continue
        case $n in dm-*|md*|sr*|ram*|zram*) continue ;; esac
        tb_udev "$n"
        tb_is_volume || continue
        paths+=("$n")
        vendor=$U_VENDOR
        model=$U_MODEL
        if [ -n "${TB_VENDOR:-}" ] && ! [[ $U_VENDOR =~ $TB_VENDOR ]]; then
            tb_refuse "$(tb_describe "$n") has the volume's identity but its vendor is not $TB_VENDOR"
        fi
        if [ -n "${TB_PRODUCT:-}" ] && ! [[ $U_MODEL =~ $TB_PRODUCT ]]; then
            tb_refuse "$(tb_describe "$n") has the volume's identity but its product is not $TB_PRODUCT"
        fi
        # every other identity the bed states must agree where the device shows it: swapped serials, a LUN
        # presented under another number or target
        if [ -n "${TB_SERIAL:-}" ] && [ -n "$U_SERIAL" ] && [ "$U_SERIAL" != "$TB_SERIAL" ]; then
            tb_refuse "$(tb_describe "$n") has the volume's identity but its serial is not $TB_SERIAL"
        fi
        if [ -n "${TB_TARGET:-}" ] && [ -n "${TB_LUN:-}" ] && [ -n "$U_PATH" ] && ! tb_at_target; then
            tb_refuse "$(tb_describe "$n") has the volume's identity but is not LUN $TB_LUN of $TB_TARGET (it is $U_PATH)"
        fi
        h=$(find "/sys/class/block/$n/holders" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | head -n 2)
        case $h in
            '') ;;
            *$'\n'*) tb_refuse "/dev/$n is held by several devices: $(echo "$h" | tr '\n' ' ')" ;;
            *) case " $seen " in *" $h "*) ;; *) holders+=("$h"); seen="$seen $h" ;; esac ;;
        esac
    done
    if [ -z "${paths[0]:-}" ]; then
        local found=''
        for n in /sys/class/block/*; do
            n=${n##*/}
            [ -e "/sys/class/block/$n/partition" ] && continue
            case $n in loop*|ram*|zram*|sr*) [ -e "/sys/class/block/$n/loop/backing_file" ] || continue ;; esac
            found="$found; $(tb_describe "$n")"
        done
        tb_refuse "no disk on $(hostname) has its identity (${TB_WWN:+WWN $TB_WWN; }${TB_SERIAL:+serial $TB_SERIAL; }${TB_TARGET:+LUN ${TB_LUN:-?} of $TB_TARGET}); the disks here: ${found#; }"
    fi
    if [ -z "${holders[0]:-}" ]; then
        if [ -n "${paths[1]:-}" ]; then
            tb_refuse "its identity appears on $(tb_count "${paths[@]}") disks (${paths[*]}) and no multipath device holds them: set up multipath first, or find the duplicate"
        fi
        dev=${paths[0]}
    else
        if [ -n "${holders[1]:-}" ]; then
            tb_refuse "its paths (${paths[*]}) are held by several devices (${holders[*]})"
        fi
        dev=${holders[0]}
        tb_udev "$dev"
        case $U_DMUUID in
            mpath-*) ;;
            *) tb_refuse "its paths (${paths[*]}) are in use by /dev/$dev, which is not a multipath device" ;;
        esac
        for n in "${paths[@]}"; do
            [ -e "/sys/class/block/$n/holders/$dev" ] || tb_refuse "path /dev/$n is not under the multipath device /dev/$dev"
        done
        for n in /sys/class/block/"$dev"/slaves/*; do
            n=${n##*/}
            case " ${paths[*]} " in *" $n "*) ;; *) tb_refuse "/dev/$dev also holds /dev/$n, which is not the volume" ;; esac
        done
    fi
    bytes=$(( $(cat "/sys/class/block/$dev/size") * 512 ))
    if [ "$bytes" -lt "$TB_MIN_BYTES" ] || [ "$bytes" -gt "$TB_MAX_BYTES" ]; then
        tb_refuse "/dev/$dev has $bytes bytes; the volume has between $TB_MIN_BYTES and $TB_MAX_BYTES ($vendor $model)"
    fi
    TB_DEVICE=/dev/$dev
}

tb_require_blank() {   # refuses $TB_DEVICE when it is in use or holds anything
    local name=${TB_DEVICE##*/} part src real probe
    while read -r src _; do
        case $src in /dev/*) ;; *) continue ;; esac
        real=$(readlink -f "$src" 2>/dev/null || echo "$src")
        for part in "$name" /sys/class/block/"$name"/"$name"*; do
            part=${part##*/}
            [ "$real" = "/dev/$part" ] && tb_refuse "$src on it is mounted"
        done
    done < /proc/mounts
    for part in /sys/class/block/"$name"/"$name"*; do
        [ -e "$part/partition" ] && tb_refuse "$TB_DEVICE has partitions (${part##*/})"
    done
    for part in /sys/class/block/"$name"/holders/*; do
        [ -e "$part" ] && tb_refuse "$TB_DEVICE is in use by /dev/${part##*/} (LVM, RAID or a partition map)"
    done
    if [ "$(readlink -f "$(findmnt -n -o SOURCE / 2>/dev/null || echo /)")" = "$TB_DEVICE" ]; then
        tb_refuse "$TB_DEVICE is the system disk"
    fi
    # blkid -p: 0 found something, 2 found nothing; any other status (8: two signatures it cannot tell
    # apart, 4: an error) prints nothing, and is no proof of a blank disk
    local status=0
    probe=$(blkid -p -o export "$TB_DEVICE" 2>&1) || status=$?
    case $status in
        0) tb_refuse "$TB_DEVICE already holds $(echo "$probe" | grep -E '^(PT)?TYPE=' | tr '\n' ' ')(a partition table, file system or LVM signature)" ;;
        2) ;;
        *) tb_refuse "blkid cannot tell what $TB_DEVICE holds (status $status: $(echo "$probe" | tr '\n' ' '))- wipefs -n $TB_DEVICE lists its signatures" ;;
    esac
}
tb_require_reuse() {   # the bed keeps the volume's file system: sets TB_FS_DEVICE and TB_FS_TYPE, or refuses
    # the file system labelled TB_REUSE_LABEL, on $TB_DEVICE itself or on exactly one of its partitions
    local name=${TB_DEVICE##*/} dev probe label type found=() seen=''
    for dev in "$TB_DEVICE" /sys/class/block/"$name"/"$name"*; do
        case $dev in
            /sys/*) [ -e "$dev/partition" ] || continue; dev=/dev/${dev##*/} ;;
        esac
        probe=$(blkid -p -o export "$dev" 2>/dev/null || true)
        label=$(printf '%s\n' "$probe" | sed -n 's/^LABEL=//p')
        type=$(printf '%s\n' "$probe" | sed -n 's/^TYPE=//p')
        [ -n "$type" ] && seen="$seen $dev:$type${label:+:$label}"
        case $type in ''|LVM2_member|swap|linux_raid_member|crypto_LUKS) continue ;; esac
        [ "$label" = "$TB_REUSE_LABEL" ] && found+=("$dev:$type")
    done
    if [ -z "${found[0]:-}" ]; then
        tb_refuse "the bed keeps its file system labelled $TB_REUSE_LABEL, but $TB_DEVICE holds${seen:- nothing: no file system}"
    fi
    if [ -n "${found[1]:-}" ]; then
        tb_refuse "$TB_DEVICE holds $(tb_count "${found[@]}") file systems labelled $TB_REUSE_LABEL (${found[*]})"
    fi
    # shellcheck disable=SC2034  # both are read by the step that keeps the file system
    TB_FS_DEVICE=${found[0]%%:*} TB_FS_TYPE=${found[0]#*:}
}
# --- end of guard
