import BeaconKit

// What `scan` lists: received reports into the table, its ticks, and the identity reads.

extension ScanSession {
    func received(_ reports: [AdvertisingReport]) {
        let now = listeningMs
        for r in reports {
            let listed = Sighting.listed(in: r, atMs: now, names: &names, table: table)
            for s in listed {
                guard !finishing else { return }
                if s.frame is HeardGATTIdentity, GATTIdentity.isAdvertised(in: r.data[...]) { reads?.consider(r) }
                let change = table.record(s)
                if json {
                    emit(s.jsonLine + "\n")
                } else if live {
                    dirty = dirty || change != .unchanged
                } else if change != .unchanged {
                    emit(BeaconTable.line(change == .new ? "new" : "changed", s) + "\n")
                }
            }
            // A read waiting for this device's name (its scan response) may go now.
            if let reads, HeardGATTIdentity.localName(in: r.data[...]) != nil { reads.nameHeard() }
        }
    }

    /// Every tick: drop beacons unheard for 8.5 s and redraw the live table.
    func tick() {
        let now = listeningMs
        let gone = table.expire(now: now)
        if !json && !live { for s in gone { emit(BeaconTable.line("gone", s) + "\n") } }
        if live {
            // The "heard" column ages, so redraw while anything is listed.
            if dirty || !gone.isEmpty || table.count > 0 {
                emit(Self.clearScreen + table.render(now: now, title: title) + readResults.map { $0.line + "\n" }.joined())
            }
            dirty = false
        }
        if !finishing { tickTimer.schedule(afterMs: Self.tickMs) { [weak self] in self?.tick() } }
    }

    var title: String {
        "altbeacond scan on \(adapter) (\(scanner.family?.rawValue ?? "-") \(mode) scan), "
            + "\(table.count) beacon\(table.count == 1 ? "" : "s"); unheard for 8.5 s are dropped; Ctrl-C ends"
    }

    var mode: String { readIdentity ? "active" : "passive" }

    /// The clock of the table: paused reads do not count as unheard time.
    var listeningMs: Int64 { reads?.listeningMs() ?? loop.now }

    /// The reader needs the adapter's own address, known once it is up (scanning).
    func startReads() {
        let address: [UInt8]
        do throws(Errno) {
            address = try adapterEvents.deviceAddress(index: scanner.index)
        } catch {
            log.error("cannot read \(adapter)'s address (\(error)); --read-identity needs it")
            outcome = .adapterLost
            return finish()
        }
        reads = IdentityReads(scanner: scanner, reader: makeReader(address), loop: loop, log: log, delegate: self)
    }

    func identityRead(_ r: IdentityReadReport) {
        var r = r
        r.name = names.identityName(r.address)
        if json {
            emit(r.jsonLine + "\n")
        } else if live {
            readResults = Array((readResults + [r]).suffix(Self.readResultsShown))
            dirty = true
        } else {
            emit(r.line + "\n")
        }
        if endAfterRead { finish() }
    }

    /// A closed pipe (`| head`) ends the scan instead of being ignored.
    func emit(_ s: String) {
        if !output.write(s) { finish() }
    }
}

extension ScanSession: IdentityReadsDelegate {
    public func identityReads(_ reads: IdentityReads, read report: IdentityReadReport) { identityRead(report) }

    public func identityReads(_ reads: IdentityReads, couldNotResume failure: ScanFailure) {
        guard !finishing else { return }
        log.error("could not scan again on \(adapter) after reading an identity (\(failure)); scan ended")
        outcome = .adapterLost
        finish()
    }

    public func identityReads(_ reads: IdentityReads, heardNameOf address: String) -> Bool { names.identityName(address) != nil }
}
