import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

// A closed pipe (`mapgate tile … | head -c 10`) is an error to handle, not a reason to die.
signal(SIGPIPE, SIG_IGN)
// A file-size limit (`ulimit -f`) is a write that fails (EFBIG: exit 74, nothing lost), not a
// process killed with its temporary files left (found by an attack).
signal(SIGXFSZ, SIG_IGN)
// Before any thread starts: every thread inherits the blocked terminating signals (SignalRouter).
SignalRouter.install()
StandardStreams.secure()
SignalRouter.exit(MapGateCLI.main(MapGateCLI.processArguments(), environment: ProcessInfo.processInfo.environment))
