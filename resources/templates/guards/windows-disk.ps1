# --- Testbed Studio guard (windows-disk, Windows Server 2012 and later): the one disk that is the
# bed's volume, or nothing.  Get-Disk shows each LUN once under MPIO, with the identity the disk
# reports: UniqueId (SCSI VPD page 0x83), SerialNumber (page 0x80), Manufacturer and Model (INQUIRY).
# The step sets $TbWant: Volume, Wwn or Serial, MinBytes, MaxBytes, and Vendor and Product (regular
# expressions) when the array family is known.  Any doubt stops the step before it writes anything.
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

function Test-TbIdentity($Disk, $Want) {
    if ($Want.Wwn) { return ((ConvertTo-TbId $Disk.UniqueId) -eq (ConvertTo-TbId $Want.Wwn)) }
    if ($Want.Serial) { return ("$($Disk.SerialNumber)".Trim() -eq "$($Want.Serial)".Trim()) }
    Stop-TbRefused 'the step names no WWN or serial'
}

function Get-TbDiskText($Disk) {
    return ('disk {0} ({1} bytes, {2} {3}, UniqueId {4}, serial {5})' -f $Disk.Number, $Disk.Size,
            "$($Disk.Manufacturer)".Trim(), "$($Disk.Model)".Trim(), $Disk.UniqueId, "$($Disk.SerialNumber)".Trim())
}

function Get-TbDiskProblem($Disk, $Want) {
    $problems = @()
    if ($Want.Vendor -and "$($Disk.Manufacturer)".Trim() -notmatch $Want.Vendor) {
        $problems += ('its vendor is {0}, not {1}' -f $Disk.Manufacturer, $Want.Vendor)
    }
    if ($Want.Product -and "$($Disk.Model)".Trim() -notmatch $Want.Product) {
        $problems += ('its product is {0}, not {1}' -f $Disk.Model, $Want.Product)
    }
    if ("$($Disk.Model)" -match 'Universal Xport') { $problems += 'it is the array''s access (UTM) LUN' }
    if ($Disk.Size -lt $Want.MinBytes -or $Disk.Size -gt $Want.MaxBytes) {
        $problems += ('it has {0} bytes, the volume between {1} and {2}' -f $Disk.Size, $Want.MinBytes, $Want.MaxBytes)
    }
    if ($Disk.IsBoot -or $Disk.IsSystem) { $problems += 'it is the boot or system disk' }
    if ("$($Disk.PartitionStyle)" -ne 'RAW') { $problems += ('it carries a {0} partition table' -f $Disk.PartitionStyle) }
    if ($Disk.NumberOfPartitions -gt 0) { $problems += ('it has {0} partition(s)' -f $Disk.NumberOfPartitions) }
    return $problems
}

function Select-TbDisk($Want) {
    $disks = @(Get-Disk)
    $found = @($disks | Where-Object { Test-TbIdentity $_ $Want })
    if ($found.Count -eq 0) {
        Stop-TbRefused ('no disk has its identity; the disks here: {0}' -f (($disks | ForEach-Object { Get-TbDiskText $_ }) -join '; '))
    }
    if ($found.Count -gt 1) {
        Stop-TbRefused ('its identity appears on {0} disks ({1}): claim them with MPIO first, or find the duplicate' -f
                        $found.Count, (($found | ForEach-Object { Get-TbDiskText $_ }) -join '; '))
    }
    $problems = @(Get-TbDiskProblem $found[0] $Want)
    if ($problems.Count -gt 0) { Stop-TbRefused ('{0}: {1}' -f (Get-TbDiskText $found[0]), ($problems -join '; ')) }
    return $found[0]
}
# --- end of guard
