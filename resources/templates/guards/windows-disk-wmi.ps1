# --- Testbed Studio guard (windows-disk-wmi, Windows Server 2008 and 2008 R2, which have no Get-Disk):
# the one disk that is the bed's volume, or nothing.  Win32_DiskDrive shows each LUN once under MPIO;
# it has no WWN, so the disk is selected by SerialNumber (SCSI VPD page 0x80); vendor and product come
# from its PNPDeviceID (VEN_...&PROD_...).  The step sets $TbWant: Volume, Serial, MinBytes, MaxBytes,
# and Vendor and Product (regular expressions) when the array family is known.
function Stop-TbRefused([string]$Why) {
    throw ("refused, nothing was written to {0}'s disk: {1}" -f $TbWant.Volume, $Why)
}

function Get-TbInquiry($Drive) {
    $inquiry = @{ Vendor = ''; Product = '' }
    if ("$($Drive.PNPDeviceID)" -match 'VEN_([^&]*)&PROD_([^&\\]*)') {
        $inquiry.Vendor = $Matches[1].Trim('_')
        $inquiry.Product = $Matches[2].Trim('_')
    }
    return $inquiry
}

function Get-TbDiskText($Drive) {
    return ('disk {0} ({1} bytes, {2}, serial {3})' -f $Drive.Index, $Drive.Size, $Drive.Model, "$($Drive.SerialNumber)".Trim())
}

function Get-TbDiskProblem($Drive, $Want) {
    $problems = @()
    $inquiry = Get-TbInquiry $Drive
    if ($Want.Vendor -and $inquiry.Vendor -notmatch $Want.Vendor) {
        $problems += ('its vendor is {0}, not {1}' -f $inquiry.Vendor, $Want.Vendor)
    }
    if ($Want.Product -and $inquiry.Product -notmatch $Want.Product) {
        $problems += ('its product is {0}, not {1}' -f $inquiry.Product, $Want.Product)
    }
    if ("$($Drive.Model)" -match 'Universal Xport') { $problems += 'it is the array''s access (UTM) LUN' }
    if ($Drive.Size -lt $Want.MinBytes -or $Drive.Size -gt $Want.MaxBytes) {
        $problems += ('it has {0} bytes, the volume between {1} and {2}' -f $Drive.Size, $Want.MinBytes, $Want.MaxBytes)
    }
    if ($Drive.Partitions -gt 0) { $problems += ('it has {0} partition(s)' -f $Drive.Partitions) }
    if ($Drive.Signature) { $problems += ('it carries an MBR partition table (signature {0})' -f $Drive.Signature) }
    return $problems
}

function Select-TbDisk($Want) {
    if (-not $Want.Serial) { Stop-TbRefused 'the step names no serial' }
    $drives = @(Get-WmiObject -Class Win32_DiskDrive)
    $found = @($drives | Where-Object { "$($_.SerialNumber)".Trim() -eq "$($Want.Serial)".Trim() })
    if ($found.Count -eq 0) {
        Stop-TbRefused ('no disk has its serial; the disks here: {0}' -f (($drives | ForEach-Object { Get-TbDiskText $_ }) -join '; '))
    }
    if ($found.Count -gt 1) {
        Stop-TbRefused ('its serial appears on {0} disks ({1}): claim them with MPIO first, or find the duplicate' -f
                        $found.Count, (($found | ForEach-Object { Get-TbDiskText $_ }) -join '; '))
    }
    $problems = @(Get-TbDiskProblem $found[0] $Want)
    if ($problems.Count -gt 0) { Stop-TbRefused ('{0}: {1}' -f (Get-TbDiskText $found[0]), ($problems -join '; ')) }
    return $found[0]
}
# --- end of guard
