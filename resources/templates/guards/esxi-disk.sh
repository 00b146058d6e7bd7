# --- Testbed Studio guard (esxi-disk): the one ESXi device that is the bed's volume, or nothing.
# Written for the ESXi shell (busybox ash: POSIX sh, no bash arrays).  The device is selected by its
# name, naa.<WWN> (or eui.<id>) from SCSI VPD page 0x83, exactly as `esxcli storage core device list`
# prints it, never by LUN number or runtime name (vmhbaN:C:T:L).  From that listing the guard checks
# the SCSI vendor and product against the array family's, refuses an access (UTM) LUN, the boot
# device, an offline or perennially reserved (RDM) device and a size outside the volume's band; then
# `esxcli storage vmfs extent list` and `partedUtil getptbl` must show no datastore, no partition and
# no partition table ("unknown" label).  Any doubt stops the step before it writes anything.
# The step sets TB_VOLUME, TB_WWN, TB_MIN_BYTES, TB_MAX_BYTES and, when the array family is known,
# TB_VENDOR and TB_PRODUCT (extended regular expressions).
tb_refuse() {
    echo "refused, nothing was written to ${TB_VOLUME:-the volume}'s disk: $*" >&2
    exit 1
}

tb_id() {   # a WWN as bare lower-case hex
    tb_w=$(printf '%s' "$1" | tr 'ABCDEF' 'abcdef')
    tb_w=${tb_w#0x}; tb_w=${tb_w#naa.}; tb_w=${tb_w#eui.}
    printf '%s' "$tb_w"
}

tb_field() {   # tb_field NAME: the value of "   NAME: value" in the selected device's block
    printf '%s\n' "$TB_BLOCK" | sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" | head -n 1 | sed 's/[[:space:]]*$//'
}

tb_select() {   # sets TB_DEVICE (the device name) and TB_BLOCK (its lines of the listing), or refuses
    [ -n "${TB_WWN:-}" ] || tb_refuse "the step names no WWN (ESXi names a LUN naa.<WWN>)"
    tb_want=$(tb_id "$TB_WWN")
    tb_list=$(esxcli storage core device list) || tb_refuse "esxcli storage core device list failed"
    # a device's name starts its line; its fields are indented under it
    tb_names=$(printf '%s\n' "$tb_list" | sed -n 's/^\([^[:space:]][^[:space:]]*\)[[:space:]]*$/\1/p' | sed 's/:$//')
    TB_DEVICE=''
    tb_count=0
    for tb_n in $tb_names; do
        case $(printf '%s' "$tb_n" | tr 'ABCDEF' 'abcdef') in
            "naa.$tb_want" | "eui.$tb_want") TB_DEVICE=$tb_n; tb_count=$((tb_count + 1)) ;;
        esac
    done
    if [ "$tb_count" -eq 0 ]; then
        tb_refuse "no device on $(hostname) is naa.$tb_want; the devices here: $(printf '%s\n' "$tb_names" | tr '\n' ' ')"
    fi
    if [ "$tb_count" -gt 1 ]; then
        tb_refuse "naa.$tb_want is listed $tb_count times by esxcli storage core device list"
    fi
    TB_BLOCK=$(printf '%s\n' "$tb_list" | awk -v d="$TB_DEVICE" '
        /^[^ \t]/ { name = $0; sub(/[ \t]+$/, "", name); sub(/:$/, "", name); on = (name == d); next }
        on { print }')
    tb_vendor=$(tb_field Vendor)
    tb_model=$(tb_field Model)
    tb_size=$(tb_field Size)
    tb_what="$TB_DEVICE ($tb_vendor $tb_model, ${tb_size:-?} MB)"
    if [ -n "${TB_VENDOR:-}" ] && ! printf '%s\n' "$tb_vendor" | grep -Eq -- "$TB_VENDOR"; then
        tb_refuse "$tb_what has the volume's identity but its vendor is not $TB_VENDOR"
    fi
    if [ -n "${TB_PRODUCT:-}" ] && ! printf '%s\n' "$tb_model" | grep -Eq -- "$TB_PRODUCT"; then
        tb_refuse "$tb_what has the volume's identity but its product is not $TB_PRODUCT"
    fi
    case $tb_model in *"Universal Xport"*) tb_refuse "$tb_what is the array's access (UTM) LUN" ;; esac
    [ "$(tb_field 'Is Boot Device')" = true ] && tb_refuse "$tb_what is the boot device"
    [ "$(tb_field 'Is Offline')" = true ] && tb_refuse "$tb_what is offline"
    [ "$(tb_field 'Is Perennially Reserved')" = true ] && tb_refuse "$tb_what is perennially reserved (an RDM of a cluster)"
    case $tb_size in
        '' | *[!0-9]*) tb_refuse "$tb_what: the listing gives no size in MB" ;;
    esac
    # Size is in MiB; awk's doubles hold any disk's byte count exactly, where ash arithmetic may not
    if ! awk -v s="$tb_size" -v lo="$TB_MIN_BYTES" -v hi="$TB_MAX_BYTES" 'BEGIN { b = s * 1048576; exit !(b >= lo && b <= hi) }'; then
        tb_refuse "$tb_what has $tb_size MB; the volume has between $TB_MIN_BYTES and $TB_MAX_BYTES bytes"
    fi
}

tb_datastore_on() {   # the datastore (VMFS volume name) with an extent on device $1, if any; fails
    # when esxcli does (in a pipe its failure was awk's success: "no datastore" on a host that said nothing)
    tb_extents=$(esxcli storage vmfs extent list) || return 1
    printf '%s\n' "$tb_extents" | awk -v d="$1" '
        NR > 2 && $(NF - 1) == d { v = $1; for (i = 2; i <= NF - 4; i++) v = v " " $i; print v; exit }'
}

tb_require_blank() {   # refuses $TB_DEVICE when it holds a datastore, a partition or a partition table
    tb_ds=$(tb_datastore_on "$TB_DEVICE") || tb_refuse "esxcli storage vmfs extent list failed"
    [ -n "$tb_ds" ] && tb_refuse "$TB_DEVICE holds the datastore $tb_ds"
    tb_ptbl=$(partedUtil getptbl "/vmfs/devices/disks/$TB_DEVICE" 2>&1) || tb_refuse "partedUtil getptbl: $tb_ptbl"
    tb_label=$(printf '%s\n' "$tb_ptbl" | sed -n 1p)
    tb_parts=$(printf '%s\n' "$tb_ptbl" | sed -n '3,$p' | grep -c '[^[:space:]]' || true)
    if [ "$tb_parts" -gt 0 ]; then
        tb_refuse "$TB_DEVICE has $tb_parts partition(s) in a $tb_label partition table: $(printf '%s\n' "$tb_ptbl" | sed -n '3,$p' | tr '\n' ';')"
    fi
    [ "$tb_label" = unknown ] || tb_refuse "$TB_DEVICE carries a $tb_label partition table (partedUtil getptbl)"
}
# --- end of guard
