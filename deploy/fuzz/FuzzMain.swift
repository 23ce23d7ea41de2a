// The one libFuzzer entry point of both harnesses: built once (an -O build with AddressSanitizer
// of every BeaconKit source takes minutes; two builds took twice that), the harness chosen at run
// time by ALTBEACOND_FUZZ (config or decoders), read once.
import Glibc

private let harness: @Sendable (UnsafePointer<UInt8>?, Int) -> Int32 = {
    switch getenv("ALTBEACOND_FUZZ").map({ String(cString: $0) }) {
    case "config": return fuzzConfig
    case "decoders": return fuzzDecoders
    default:
        let text = Array("fuzz: set ALTBEACOND_FUZZ to config or decoders\n".utf8)
        _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(64)
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { harness(data, size) }
