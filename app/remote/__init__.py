"""Remote transports: run one script on one host (this machine, SSH or WinRM) behind one
interface, streaming its output line by line.  paramiko and winrm are imported only by the
transport that needs them."""
