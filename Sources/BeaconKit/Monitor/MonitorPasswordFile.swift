/// `[mqtt] password_file` judged by its owner and mode before it is read, as ssh judges a private
/// key: a secret others can read is refused, plainly, with the command that fixes it. Pure: the
/// caller stats the file.
public enum MonitorPasswordFile {
    /// The file's owner, group and permission bits, and who the monitor runs as.
    public struct Facts: Sendable, Equatable {
        public var mode: UInt32
        public var owner: UInt32
        public var group: UInt32
        public var uid: UInt32
        public var gid: UInt32
        public init(mode: UInt32, owner: UInt32, group: UInt32, uid: UInt32, gid: UInt32) {
            self.mode = mode; self.owner = owner; self.group = group; self.uid = uid; self.gid = gid
        }
    }

    /// Why `path` is not to be used, or nil. Accepted: owned by root or the monitor's user, nothing
    /// for others, not group-writable, and group-readable only by the monitor's own group (the
    /// packaged setup: `root:altbeacond 0640`, or `altbeacond 0600`).
    /// `what` names the file in the message (the client key of `[mqtt] key_file` is judged alike).
    public static func problem(path: String, _ f: Facts, what: String = "the MQTT password file") -> String? {
        let bits = "0" + String(f.mode & 0o777, radix: 8)
        if f.owner != 0 && f.owner != f.uid {
            return "\(what) \(path) belongs to uid \(f.owner), neither root nor the monitor's user (uid \(f.uid)): "
                + "refused (chown root \(path))"
        }
        if f.mode & 0o007 != 0 {
            return "\(what) \(path) is open to every user (mode \(bits)): refused (chmod o-rwx \(path))"
        }
        if f.mode & 0o020 != 0 {
            return "\(what) \(path) is writable by its group (mode \(bits)): refused (chmod g-w \(path))"
        }
        if f.mode & 0o040 != 0 && f.group != f.gid {
            return "\(what) \(path) is readable by group \(f.group), not the monitor's own (gid \(f.gid)) "
                + "(mode \(bits)): refused (chmod g-r \(path), or chgrp to the monitor's group)"
        }
        return nil
    }
}
