# --- Testbed Studio guard (windows-disk-wmi, Windows Server 2008 and 2008 R2, which have no Get-Disk):
# the one disk that is the bed's volume, or nothing.  Written for PowerShell 2.0.  Win32_DiskDrive shows
# each LUN once under MPIO; it has no WWN, so the disk is selected by SerialNumber (SCSI VPD page 0x80)
# or, over iSCSI, by the target and LUN the Microsoft initiator reports for it: each session of
# MSiSCSIInitiator_SessionClass (root\WMI) lists its devices with their LUN and device number, the
# number of \\.\PhysicalDriveN and of Win32_DiskDrive.Index.  Vendor and product come from the
# disk's PNPDeviceID (VEN_...&PROD_...).  The step sets $TbWant: Volume, Serial or Target and Lun,
# MinBytes, MaxBytes, Vendor and Product (regular expressions) when the array family is known, and
# Reuse (the label of a file system to keep) when the bed says to reuse the volume's file system.
# Get-TbDiskFacts is the only part that asks Windows anything (Get-WmiObject: read-only); the
# decision (Select-TbDiskFromFacts) reads only those facts and $TbWant, and is run on recorded WMI
# output by tests/test_windows_guards.py.
function Stop-TbRefused([string]$Why) {
    throw ("refused, nothing was written to {0}'s disk: {1}" -f $TbWant.Volume, $Why)
}

function Get-TbDiskFacts($Want) {
    $paths = @()
    if ("$($Want.Target)" -match '^(iqn|eui|naa)\.') {   # an iSCSI name (an FC port's WWPN has no session here)
        foreach ($session in @(Get-WmiObject -Namespace 'root\WMI' -Class MSiSCSIInitiator_SessionClass)) {
            foreach ($device in @($session.Devices)) {
                $paths += ('{0}|{1}|{2}' -f "$($device.TargetName)".ToLowerInvariant(), $device.ScsiLun, $device.DeviceNumber)
            }
        }
    }
    $facts = @()
    foreach ($drive in @(Get-WmiObject -Class Win32_DiskDrive)) {
        $vendor = ''
        $product = ''
        if ("$($drive.PNPDeviceID)" -match 'VEN_([^&]*)&PROD_([^&\\]*)') {
            $vendor = $Matches[1].Trim('_')
            $product = $Matches[2].Trim('_')
        }
        $targets = @()
        foreach ($path in $paths) {
            $parts = $path.Split('|')
            if ($parts[2] -eq "$($drive.Index)") { $targets += ('{0}|{1}' -f $parts[0], $parts[1]) }
        }
        $labels = @()
        if ($Want.Reuse -and $drive.Partitions -gt 0) {
            $query = "ASSOCIATORS OF {Win32_DiskDrive.DeviceID='" + "$($drive.DeviceID)".Replace('\', '\\') +
                     "'} WHERE AssocClass = Win32_DiskDriveToDiskPartition"
            foreach ($partition in @(Get-WmiObject -Query $query)) {
                $query = "ASSOCIATORS OF {Win32_DiskPartition.DeviceID='" + $partition.DeviceID + "'} WHERE AssocClass = Win32_LogicalDiskToPartition"
                foreach ($logical in @(Get-WmiObject -Query $query)) { $labels += "$($logical.VolumeName)" }
            }
        }
        $facts += @{ Number = $drive.Index; Size = [int64]$drive.Size; Serial = "$($drive.SerialNumber)".Trim();
                     Vendor = $vendor; Product = $product; Model = "$($drive.Model)".Trim();
                     Partitions = [int]$drive.Partitions; Signature = "$($drive.Signature)"; Targets = $targets;
                     Labels = $labels }
    }
    return $facts
}

function Test-TbAtTarget($Fact, $Want) {
    $path = ('{0}|{1}' -f "$($Want.Target)".ToLowerInvariant(), $Want.Lun)
    foreach ($target in $Fact.Targets) { if ($target -eq $path) { return $true } }
    return $false
}

function Test-TbIdentity($Fact, $Want) {
    # -ceq: PowerShell's -eq ignores case, and serials differing only in case are two LUNs (NetApp's are mixed case)
    if ($Want.Serial) { return ($Fact.Serial -ne '' -and $Fact.Serial -ceq "$($Want.Serial)".Trim()) }
    if ($Want.Target) { return (Test-TbAtTarget $Fact $Want) }
    Stop-TbRefused 'the step names no serial, or target and LUN'
}

function Get-TbDiskText($Fact) {
    return ('disk {0} ({1} bytes, {2}, serial {3})' -f $Fact.Number, $Fact.Size, $Fact.Model, $Fact.Serial)
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
    # every identity the bed states must agree where the disk shows it: a serial of one volume, the LUN of another
    if ($Want.Serial -and $Want.Target -and @($Fact.Targets).Count -gt 0 -and -not (Test-TbAtTarget $Fact $Want)) {
        $problems += ('it is not LUN {0} of {1} (the initiator shows it as target|LUN {2})' -f $Want.Lun, $Want.Target,
                      (@($Fact.Targets) -join ', '))
    }
    if ($Fact.Model -match 'Universal Xport' -or $Fact.Product -match 'Universal.Xport') {
        $problems += 'it is the array''s access (UTM) LUN'
    }
    if ($Fact.Size -lt $Want.MinBytes -or $Fact.Size -gt $Want.MaxBytes) {
        $problems += ('it has {0} bytes, the volume between {1} and {2}' -f $Fact.Size, $Want.MinBytes, $Want.MaxBytes)
    }
    if ($Want.Reuse) {
        $kept = $false
        foreach ($label in $Fact.Labels) { if ($label -eq $Want.Reuse) { $kept = $true } }
        if (-not $kept) {
            $problems += ('it holds no file system labelled {0} to reuse (labels: {1})' -f $Want.Reuse, ($Fact.Labels -join ', '))
        }
    } else {
        if ($Fact.Partitions -gt 0) { $problems += ('it has {0} partition(s)' -f $Fact.Partitions) }
        if ($Fact.Signature -ne '' -and $Fact.Signature -ne '0') {
            $problems += ('it carries an MBR partition table (signature {0})' -f $Fact.Signature)
        }
    }
    return $problems
}

function Select-TbDiskFromFacts($Facts, $Want) {
    # a bound that is no number makes -lt fail, and the statement after it runs as if the size were right
    if ("$($Want.MinBytes)" -notmatch '^[0-9]+$' -or "$($Want.MaxBytes)" -notmatch '^[0-9]+$') {
        Stop-TbRefused ('the step states no size for the volume (MinBytes {0}, MaxBytes {1}): its disk''s size cannot be checked' -f
                        $Want.MinBytes, $Want.MaxBytes)
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
