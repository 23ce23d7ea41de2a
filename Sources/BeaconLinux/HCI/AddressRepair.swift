import BeaconKit
import Glibc

/// Gives a controller without a usable address the board's own (SPEC §11): a Pi's on-board
/// controller comes from the kernel's UART driver with no hciuart service to set one, so it is
/// either left unconfigured (btbcm marks a chip default address invalid, and HCIDEVUP fails with
/// EOPNOTSUPP until a public address is set through mgmt) or comes up with a default several
/// boards share. The decisions are BeaconKit's `AddressRepairProcedure`; this runs one per
/// bring-up: HCIDEVUP/HCIDEVDOWN through the caller, mgmt commands on its own socket, the board
/// serial read from `serialPath`. One per daemon: what it logged and gave is remembered per
/// adapter (`AddressRepairMemory`), so a retry every few seconds does not repeat a line.
public final class AddressRepair {
    private let loop: EventLoop
    private let log: Logger
    private let mgmt: ManagementSocket
    private let serialPath: String
    private var memory = AddressRepairMemory()
    /// The board's serial, read at the first bring-up: it does not change while we run.
    private lazy var serial = readSerial()

    /// `serialPath`: the board's serial; ALTBEACOND_BOARD_SERIAL names another file (tests, or a
    /// board whose serial lives elsewhere). Read through /sys: /proc/device-tree is a link into it
    /// that the unit's ProcSubset=pid hides.
    public init(loop: EventLoop, log: Logger,
                serialPath: String = environment("ALTBEACOND_BOARD_SERIAL") ?? "/sys/firmware/devicetree/base/serial-number") {
        self.loop = loop
        self.log = log
        self.serialPath = serialPath
        mgmt = ManagementSocket(loop: loop)
    }

    /// The static random address adapter `index` advertises from (nil: its public address).
    public func staticRandomAddress(index: UInt16) -> BluetoothAddress? { memory.staticRandom[index] }

    /// One bring-up of adapter `index` with the repair around it. `power` is HCIDEVUP/HCIDEVDOWN,
    /// `address` what the adapter reports; `done`, always on a later loop turn, with the outcome.
    public func bringUp(index: UInt16, power: @escaping (_ up: Bool, _ done: @escaping (Errno?) -> Void) -> Void,
                        address: @escaping () -> BluetoothAddress?, _ done: @escaping (Errno?) -> Void) {
        var procedure = AddressRepairProcedure(index: index, serial: serial, serialPath: serialPath)
        // Each answer feeds the procedure, whose steps are performed in order.
        var perform: ([AddressRepairProcedure.Step]) -> Void = { _ in }
        perform = { [weak self] steps in
            guard let self else { return }
            for step in steps {
                switch step {
                case .power(let up):
                    // what the adapter reports matters once it is up (the procedure ignores it after a down)
                    power(up) { [weak self] e in
                        guard let self else { return }
                        perform(procedure.powered(e, address: up ? address() : nil, &memory))
                    }
                case .send(let command):
                    mgmt.send(command) { [weak self] r in
                        guard let self else { return }
                        perform(procedure.answered(r.mapError { ManagementRefusal("\($0)") }, &memory))
                    }
                case .error(let m): log.error(m)
                case .warning(let m): log.warning(m)
                case .notice(let m): log.notice(m)
                case .finished(let e):
                    perform = { _ in }   // ends the cycle perform -> completion -> perform
                    loop.post { done(e) }
                }
            }
        }
        perform(procedure.start())
    }

    private func readSerial() -> BoardSerialReading {
        do throws(Errno) {
            let bytes = try readFile(serialPath, limit: 64)
            return BoardAddress.serial(fromDeviceTree: bytes).map(BoardSerialReading.serial) ?? .notASerial
        } catch {
            return .unreadable("\(error)")
        }
    }
}
