import BeaconKit
import CGPIOD
import Glibc

/// Why a GPIO chip or line could not be had, worded for the log.
public enum GPIOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No chip with that name, path or label.
    case noChip(String)
    /// No `leds.chip` given and no chip with one of the header's labels.
    case noHeaderChip
    /// Not allowed to open the chip: needs root or membership of the chip's group (gpio).
    case permissionDenied(String)
    /// The path exists but is not a GPIO character device.
    case notAChip(String)
    case offsetOutOfRange(UInt32, lineCount: UInt32)
    /// `hint`: what to write instead, when the name means a line the chip names otherwise.
    case noLineNamed(String, hint: String?)
    /// Held by another process (`consumer` as gpioinfo shows it, when known).
    case busy(consumer: String?)
    case system(String, Errno)

    public var description: String {
        switch self {
        case .noChip(let spec):
            return "no GPIO chip named, at or labelled \"\(spec)\" (see gpiodetect)"
        case .noHeaderChip:
            return "no GPIO chip of a Raspberry Pi's 40-pin header (labelled \(LEDSettings.headerChipLabels.joined(separator: ", "))): set leds.chip (see gpiodetect)"
        case .permissionDenied(let what):
            return "permission denied on \(what) (run as root or give the service access to /dev/gpiochipN)"
        case .notAChip(let path):
            return "\(path) is not a GPIO chip"
        case .offsetOutOfRange(let n, let count):
            return "offset \(n) out of range (chip has \(count) lines)"
        case .noLineNamed(let name, let hint):
            return "no line named \(name)" + (hint.map { "; \($0)" } ?? "")
        case .busy(let who):
            if let who, !who.isEmpty { return "line busy: held by \"\(who)\"" }
            return "line busy: held by another process"
        case .system(let op, let e):
            return "\(op): \(e)"
        }
    }
}

/// An open GPIO chip (libgpiod 1.x or 2.x through the CGPIOD shim).
public final class GPIOChip {
    private var handle: OpaquePointer?
    /// "/dev/gpiochip0".
    public let path: String
    /// "pinctrl-bcm2711".
    public let label: String
    public let lineCount: UInt32

    /// The libgpiod API major version this build uses (1 or 2).
    public static var apiMajor: Int { Int(cgpiod_api_major()) }

    /// `spec` is a name ("gpiochip0"), a path ("/dev/gpiochip0") or a label ("pinctrl-bcm2711").
    public init(opening spec: String) throws(GPIOError) {
        guard let h = cgpiod_chip_open(spec) else {
            let e = Errno.current
            switch e.rawValue {
            case EACCES, EPERM:
                if spec.hasPrefix("/") { throw .permissionDenied(spec) }
                // a name opens /dev/NAME; a label means every chip had to be opened to compare
                if access("/dev/\(spec)", F_OK) == 0 { throw .permissionDenied("/dev/\(spec)") }
                throw .permissionDenied("/dev/gpiochip* (looking for label \(spec))")
            case ENOENT, ENXIO: throw .noChip(spec)
            case ENODEV, ENOTTY, EINVAL: throw .notAChip(spec)
            default: throw .system("cannot open GPIO chip \(spec)", e)
            }
        }
        handle = h
        path = String(cString: cgpiod_chip_path(h))
        label = String(cString: cgpiod_chip_label(h))
        lineCount = cgpiod_chip_num_lines(h)
    }

    deinit { close() }

    public func close() {
        if let h = handle { cgpiod_chip_close(h) }
        handle = nil
    }

    /// The line's offset: range-checked, or looked up by name.
    public func offset(of ref: GPIOLineRef) throws(GPIOError) -> UInt32 {
        switch ref {
        case .offset(let n):
            guard n < lineCount else { throw .offsetOutOfRange(n, lineCount: lineCount) }
            return n
        case .name(let name):
            guard let h = handle else { throw .system("chip closed", Errno(EBADF)) }
            let off = cgpiod_chip_find_line(h, name)
            guard off >= 0 else {
                let e = Errno.current
                if e == .noEntry { throw .noLineNamed(name, hint: hint(forMissing: name)) }
                throw .system("cannot look up line \(name)", e)
            }
            return UInt32(truncatingIfNeeded: off)
        }
    }

    /// "GPIO4" not found where line 4 is "GPIO_GCLK" (a Pi's lines 0-15 are named after their
    /// function): the offset works on every model.
    private func hint(forMissing name: String) -> String? {
        guard let n = GPIOLineRef.socNumber(inName: name), n < lineCount else { return nil }
        let actual = lineName(offset: n)
        return "line \(n) of \(label) is named \(actual.map { "\"\($0)\"" } ?? "nothing"): give its offset, \(n) (a number, no quotes)"
    }

    /// The line's name from the device tree; nil when it has none.
    public func lineName(offset: UInt32) -> String? { lineText(offset, cgpiod_line_name) }

    /// The Raspberry Pi's 40-pin header chip, by its label on each model (`LEDSettings.headerChipLabels`).
    public static func openHeaderChip() throws(GPIOError) -> GPIOChip {
        for label in LEDSettings.headerChipLabels {
            do throws(GPIOError) {
                return try GPIOChip(opening: label)
            } catch {
                if case .noChip = error { continue }
                throw error
            }
        }
        throw .noHeaderChip
    }

    /// Who holds the line, as `gpioinfo` shows it; nil when unused or unknown.
    public func consumer(ofLine offset: UInt32) -> String? { lineText(offset, cgpiod_line_consumer) }

    /// A text the shim copies out for one line (its name, its consumer); nil when empty or unknown.
    private func lineText(_ offset: UInt32, _ read: (OpaquePointer?, UInt32, UnsafeMutablePointer<CChar>?, Int) -> Int32) -> String? {
        guard let h = handle else { return nil }
        var buf = [CChar](repeating: 0, count: 64)
        guard read(h, offset, &buf, buf.count) == 0 else { return nil }
        let s = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return s.isEmpty ? nil : s
    }

    /// Requests one line as an output, `lit` being the logical level (active-low inverts the pin).
    public func requestOutput(offset: UInt32, consumer: String, activeLow: Bool,
                              lit: Bool) throws(GPIOError) -> GPIOOutputLine {
        guard let h = handle else { throw .system("chip closed", Errno(EBADF)) }
        guard let line = cgpiod_line_request_output(h, offset, consumer, activeLow ? 1 : 0, lit ? 1 : 0) else {
            let e = Errno.current
            switch e.rawValue {
            case EBUSY: throw .busy(consumer: self.consumer(ofLine: offset))
            case ERANGE: throw .offsetOutOfRange(offset, lineCount: lineCount)
            case EACCES, EPERM: throw .permissionDenied(path)
            default: throw .system("cannot request line \(offset)", e)
            }
        }
        return GPIOOutputLine(line, chip: self, offset: offset)
    }
}

/// A requested output line. Keeps its chip open (libgpiod 1.x lines belong to the chip).
public final class GPIOOutputLine {
    private var handle: OpaquePointer?
    private let chip: GPIOChip
    public let offset: UInt32

    fileprivate init(_ handle: OpaquePointer, chip: GPIOChip, offset: UInt32) {
        self.handle = handle
        self.chip = chip
        self.offset = offset
    }

    deinit { release() }

    public func set(lit: Bool) throws(Errno) {
        guard let h = handle else { throw Errno(EBADF) }
        if cgpiod_line_set_value(h, lit ? 1 : 0) < 0 { throw Errno.current }
    }

    public func release() {
        if let h = handle { cgpiod_line_release(h) }
        handle = nil
    }
}
