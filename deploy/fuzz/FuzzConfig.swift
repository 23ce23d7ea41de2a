// libFuzzer harness for the config parser (SPEC §2: never crash, hang or grow without bound).
// Built by deploy/fuzz/run together with Sources/BeaconKit/**/*.swift into one module.

// Called by FuzzMain.swift when ALTBEACOND_FUZZ=config.
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let lineCount = bytes.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    switch ConfigFile.parse(bytes, path: "fuzz.toml") {
    case .success(let config):
        // Whatever is accepted is in range.
        if config.beacon.uuid.count != 16 || config.bluetooth.intervalMs < 20 || config.watchdog.checkIntervalS == 0 {
            trap("accepted an out-of-range config")
        }
    case .failure(let d):
        if d.line < 1 || d.column < 1 || d.line > lineCount || d.message.isEmpty {
            trap("diagnostic outside the input: \(d.line):\(d.column) of \(lineCount) lines")
        }
        _ = d.description
    }
    // Every diagnostic of a check run is inside the input, there are at most TOML.maxErrors,
    // and nothing echoed writes a raw control character to the terminal.
    if case .failure(let all) = ConfigFile.parseAll(bytes, path: "fuzz.toml") {
        if all.all.isEmpty || all.all.count > TOML.maxErrors { trap("\(all.all.count) diagnostics") }
        for d in all.all {
            if d.line < 1 || d.column < 1 || d.line > lineCount { trap("diagnostic outside the input: \(d.line):\(d.column)") }
            if d.description.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || $0.value == 0x7F }) {
                trap("raw control character in a diagnostic")
            }
        }
    }
    if case .failure(let d) = TOML.parse(bytes, path: "fuzz.toml"), d.line > lineCount {
        trap("TOML diagnostic outside the input")
    }
    return 0
}

private func trap(_ message: String) -> Never {
    print("fuzz invariant broken: \(message)")
    fatalError(message)
}
