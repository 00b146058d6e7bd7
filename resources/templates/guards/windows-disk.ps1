# --- Testbed Studio guard (windows-disk, Windows Server 2012 and later): the one disk that is the
# bed's volume, or nothing.  Get-Disk shows each LUN once under MPIO, with the identity the disk
# reports: UniqueId (SCSI VPD page 0x83), SerialNumber (page 0x80), Manufacturer and Model (INQUIRY).
# The step sets $TbWant: Volume, Wwn or Serial, MinBytes, MaxBytes, Vendor and Product (regular
# expressions) when the array family is known, and Reuse (the label of a file system to keep) when
# the bed says to reuse the volume's file system.  Any doubt stops the step before it writes.
# Get-TbDiskFacts is the only part that asks Windows anything (Get-Disk, Get-Partition, Get-Volume:
# read-only); the decision (Select-TbDiskFromFacts) reads only those facts and $TbWant, and is run
# on recorded Get-Disk output by tests/test_windows_guards.py.
function Stop-TbRefused([string]$Why) {
    throw ("refused, nothing was written to {0}'s disk: {1}" -f $TbWant.Volume, $Why)
}

function ConvertTo-TbId([string]$Id) {
    $text = "$Id".Trim().ToLowerInvariant()
    foreach ($prefix in @('naa.', 'eui.', '0x')) {
        if ($text.StartsWith($prefix)) { $text = $text.Substring($prefix.Length) }
    }
    return $text
}

function Get-TbDiskFacts($Want) {
    $facts = @()
    foreach ($disk in @(Get-Disk)) {
        $style = "$($disk.PartitionStyle)"
        if ($style -eq '0') { $style = 'RAW' } elseif ($style -eq '1') { $style = 'MBR' } elseif ($style -eq '2') { $style = 'GPT' }
        $labels = @()
        if ($Want.Reuse -and $disk.NumberOfPartitions -gt 0) {
            foreach ($part in @(Get-Partition -DiskNumber $disk.Number)) {
                foreach ($vol in @(Get-Volume -Partition $part)) { $labels += "$($vol.FileSystemLabel)" }
            }
        }
        $facts += @{ Number = $disk.Number; Size = [int64]$disk.Size; UniqueId = "$($disk.UniqueId)";
                     Serial = "$($disk.SerialNumber)".Trim(); Vendor = "$($disk.Manufacturer)".Trim();
                     Product = "$($disk.Model)".Trim(); PartitionStyle = $style;
                     Partitions = [int]$disk.NumberOfPartitions; IsBoot = $disk.IsBoot -eq $true;
                     IsSystem = $disk.IsSystem -eq $true; IsOffline = $disk.IsOffline -eq $true;
                     IsReadOnly = $disk.IsReadOnly -eq $true; IsClustered = $disk.IsClustered -eq $true;
                     Labels = $labels }
    }
    return $facts
}

function Test-TbIdentity($Fact, $Want) {
    if ($Want.Wwn) { return ((ConvertTo-TbId $Fact.UniqueId) -eq (ConvertTo-TbId $Want.Wwn)) }
    # -ceq: PowerShell's -eq ignores case, and serials differing only in case are two LUNs (NetApp's are mixed case)
    if ($Want.Serial) {
        # a fact has Serial; Get-Disk's own object (the steps' "formatted already" check) has SerialNumber
        $serial = "$($Fact.Serial)"
        if ($serial -eq '') { $serial = "$($Fact.SerialNumber)".Trim() }
        return ($serial -ne '' -and $serial -ceq "$($Want.Serial)".Trim())
    }
    Stop-TbRefused 'the step names no WWN or serial'
}

function Get-TbDiskText($Fact) {
    return ('disk {0} ({1} bytes, {2} {3}, UniqueId {4}, serial {5})' -f $Fact.Number, $Fact.Size, $Fact.Vendor,
            $Fact.Product, $Fact.UniqueId, $Fact.Serial)
}

function Get-TbDisksText($Facts) {
    $texts = @()
    foreach ($fact in $Facts) { $texts += (Get-TbDiskText $fact) }
    return ($texts -join '; ')
}

function Get-TbDiskProblem($Fact, $Want) {
    $problems = @()
    if ($Want.Vendor -and $Fact.Vendor -notmatch $Want.Vendor) {
        $problems += ('its vendor is {0}, not {1}' -f $Fact.Vendor, $Want.Vendor)
    }
    if ($Want.Product -and $Fact.Product -notmatch $Want.Product) {
        $problems += ('its product is {0}, not {1}' -f $Fact.Product, $Want.Product)
    }
    # every identity the bed states must agree where the disk shows it: a WWN and a serial of two volumes
    if ($Want.Wwn -and $Want.Serial -and $Fact.Serial -ne '' -and $Fact.Serial -cne "$($Want.Serial)".Trim()) {
        $problems += ('its serial is {0}, not {1}' -f $Fact.Serial, "$($Want.Serial)".Trim())
    }
    if ($Fact.Product -match 'Universal Xport') { $problems += 'it is the array''s access (UTM) LUN' }
    if ($Fact.Size -lt $Want.MinBytes -or $Fact.Size -gt $Want.MaxBytes) {
        $problems += ('it has {0} bytes, the volume between {1} and {2}' -f $Fact.Size, $Want.MinBytes, $Want.MaxBytes)
    }
    if ($Fact.IsBoot -or $Fact.IsSystem) { $problems += 'it is the boot or system disk' }
    if ($Want.Reuse) {
        $kept = $false
        foreach ($label in $Fact.Labels) { if ($label -eq $Want.Reuse) { $kept = $true } }
        if (-not $kept) {
            $problems += ('it holds no file system labelled {0} to reuse (labels: {1})' -f $Want.Reuse, ($Fact.Labels -join ', '))
        }
    } else {
        if ($Fact.PartitionStyle -ne 'RAW') { $problems += ('it carries a {0} partition table' -f $Fact.PartitionStyle) }
        if ($Fact.Partitions -gt 0) { $problems += ('it has {0} partition(s)' -f $Fact.Partitions) }
        # a disk a failover cluster holds (on a node that does not own it, its partitions may read as none)
        if ($Fact.IsClustered) { $problems += 'it is a disk of a failover cluster (IsClustered), in use by the cluster' }
    }
    return $problems
}

function Select-TbDiskFromFacts($Facts, $Want) {
    # a bound that is no number makes -lt fail, and the statement after it runs as if the size were right
    if ("$($Want.MinBytes)" -notmatch '^[0-9]+$' -or "$($Want.MaxBytes)" -notmatch '^[0-9]+$') {
        Stop-TbRefused ('the step states no size for the volume (MinBytes {0}, MaxBytes {1}): its disk''s size cannot be checked' -f
                        $Want.MinBytes, $Want.MaxBytes)
    }
    # an identity that is empty once normalised would match every disk that shows none
    if ($Want.Wwn -and (ConvertTo-TbId $Want.Wwn) -eq '') {
        Stop-TbRefused ('Wwn {0} is no WWN: nothing is left of it without naa., eui. or 0x' -f $Want.Wwn)
    }
    $found = @()
    foreach ($fact in $Facts) { if (Test-TbIdentity $fact $Want) { $found += $fact } }
    if ($found.Count -eq 0) { Stop-TbRefused ('no disk has its identity; the disks here: {0}' -f (Get-TbDisksText $Facts)) }
    if ($found.Count -gt 1) {
        Stop-TbRefused ('its identity appears on {0} disks ({1}): claim them with MPIO first, or find the duplicate' -f
                        $found.Count, (Get-TbDisksText $found))
    }
    $problems = @(Get-TbDiskProblem $found[0] $Want)
    if ($problems.Count -gt 0) { Stop-TbRefused ('{0}: {1}' -f (Get-TbDiskText $found[0]), ($problems -join '; ')) }
    return $found[0]
}

function Select-TbDisk($Want) {
    return (Select-TbDiskFromFacts @(Get-TbDiskFacts $Want) $Want)
}
# --- end of guard
