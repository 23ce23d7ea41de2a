import BeaconKit
import BeaconLinux

func scanCommand(adapter: String, timeoutSeconds: UInt32?, json: Bool) -> Int32 {
    writeStandardError("altbeacond: scan is not built yet\n")
    return ExitCode.unavailable
}
