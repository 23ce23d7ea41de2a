import Glibc
import XCTest
@testable import BeaconKit
@testable import BeaconLinux

/// `TLSClientConfig.load` over Mbed TLS (issue 30): the files `[mqtt]` names, read as the monitor
/// reads them, each failure in words. The handshakes themselves run against mosquitto in the
/// testbed (monitor-mqtt-tls). Fixtures: a P-256 CA, a client certificate it signed and the
/// client's key, and a key of no certificate (made once with openssl, valid for 100 years).
final class TLSClientConfigTests: XCTestCase {
    static let ca = """
-----BEGIN CERTIFICATE-----
MIIBgjCCASegAwIBAgIUGS3jebY5mZ3LLraAcWmm5adLZSIwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZml4dHVyZS1jYTAgFw0yNjExMjYwNTQwMTFaGA8yMTI2MTEw
MjA1NDAxMVowFTETMBEGA1UEAwwKZml4dHVyZS1jYTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABNPDQSJC3VufIOuulz0qHf6WL7A4ulAaLlN0ryM2Khq10SpPH+NP
KzY3bfyrr501Du698lB5Smk/kuqngRKMYhujUzBRMB0GA1UdDgQWBBSGZSbtKGtY
q2H1cCEZHvrKOZytDDAfBgNVHSMEGDAWgBSGZSbtKGtYq2H1cCEZHvrKOZytDDAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0kAMEYCIQDgHZJyJ7+yN6PpETce
8TeK9pdWpAN9xra3myAxm3vrOgIhAO14AdJuZNpaUEesuNzZCeAoyoaDaRAPl7Pc
ApA8NrXS
-----END CERTIFICATE-----
"""
    static let clientCert = """
-----BEGIN CERTIFICATE-----
MIIBKjCB0QIUdhxJHqiam6rupqoEqVE+8d4VgeQwCgYIKoZIzj0EAwIwFTETMBEG
A1UEAwwKZml4dHVyZS1jYTAgFw0yNjExMjYwNTQwMTFaGA8yMTI2MTEwMjA1NDAx
MVowGTEXMBUGA1UEAwwOZml4dHVyZS1jbGllbnQwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASXYK9Qhgl7dLegILQJRp1kDkIyXM9gFyrUrLeMEc9+DJ78h9HN1Yl+
7+ymvRjnYNG7cKS1lyVswZPpAc61ubB6MAoGCCqGSM49BAMCA0gAMEUCIFfy9gi/
2A2Ly8Pkxyc+aEJOx1Y4t8atWWuw6XziKradAiEAnB5y5l6mLsVFhHVHsH4jM/he
ZcjRTLAb8a1k96OHCoE=
-----END CERTIFICATE-----
"""
    static let clientKey = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgc1SwTLKgHit/vzRG
wlYdkQwvezfCWLU/ARbGHl+FdpyhRANCAASXYK9Qhgl7dLegILQJRp1kDkIyXM9g
FyrUrLeMEc9+DJ78h9HN1Yl+7+ymvRjnYNG7cKS1lyVswZPpAc61ubB6
-----END PRIVATE KEY-----
"""
    static let otherKey = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg3t1nxoxfh/3tnm2N
d5Nxouo68UBiHVmrixc+LUUrPNahRANCAAQOv+R4s9lo1g6jF/hsMoiKVYql7QRm
UkSunvSjGuNlusHuE2snHaCMFZymsfWeeGO+92y6fLDpexaWXoW/kYOQ
-----END PRIVATE KEY-----
"""

    /// `clientCert` with its outer DER length changed (MIIB -> MIIC): valid PEM and base64, no
    /// certificate.
    static let corruptedCert = clientCert.replacing("-----\nMIIBKjCB", with: "-----\nMIICKjCB")

    var dir = ""

    override func setUp() {
        var template = Array("/tmp/tls-config-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    override func tearDown() {
        for f in ["ca.pem", "client.pem", "client.key", "other.key", "junk.pem", "junk.key", "mixed.pem", "mixed2.pem"] { unlink("\(dir)/\(f)") }
        rmdir(dir)
    }

    func file(_ name: String, _ text: String, mode: mode_t = 0o600) -> String {
        let path = "\(dir)/\(name)"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        XCTAssertGreaterThanOrEqual(fd, 0)
        _ = text.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
        fchmod(fd, mode)
        close(fd)
        return path
    }

    func error(_ s: MQTTTLSSettings) -> String? {
        if case .failure(let e) = TLSClientConfig.load(s) { return e.text }
        return nil
    }

    func testTheCAAloneAndWithTheClientsPair() {
        let ca = file("ca.pem", Self.ca, mode: 0o644)
        XCTAssertNil(error(MQTTTLSSettings(caFile: ca)))
        let cert = file("client.pem", Self.clientCert, mode: 0o644), key = file("client.key", Self.clientKey)
        guard case .success(let c) = TLSClientConfig.load(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: key)) else {
            return XCTFail("the pair was refused: \(error(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: key)) ?? "")")
        }
        XCTAssertTrue(c.hasClientCertificate)
        XCTAssertTrue(TLSClientConfig.library.lowercased().hasPrefix("mbed tls "), TLSClientConfig.library)
    }

    func testEachFileThatCannotBeUsedIsNamed() {
        let ca = file("ca.pem", Self.ca, mode: 0o644)
        let junk = file("junk.pem", "not a certificate\n", mode: 0o644)
        XCTAssertTrue(error(MQTTTLSSettings(caFile: junk))?.hasPrefix("cannot use the CA file \(junk): ") == true, error(MQTTTLSSettings(caFile: junk)) ?? "")
        XCTAssertTrue(error(MQTTTLSSettings(caFile: "\(dir)/none.pem"))?.hasPrefix("cannot use the CA file \(dir)/none.pem: ") == true)
        let cert = file("client.pem", Self.clientCert, mode: 0o644)
        let other = file("other.key", Self.otherKey)
        XCTAssertEqual(error(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: other)),
                       "the client key \(other) does not belong to the client certificate")
        XCTAssertTrue(error(MQTTTLSSettings(caFile: ca, certFile: junk, keyFile: other))?.hasPrefix("cannot use the client certificate \(junk): ") == true)
        let junkKey = file("junk.key", "not a key\n")
        XCTAssertTrue(error(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: junkKey))?.hasPrefix("cannot use the client key \(junkKey): ") == true,
                      error(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: junkKey)) ?? "")
    }

    /// A CA file of which one certificate does not parse (the other does) is refused, named, not
    /// used with its one good anchor (issue 38): Mbed TLS's parse returns the count of failures.
    func testACAFileWithACertificateThatDoesNotParseIsRefused() {
        let corrupted = Self.corruptedCert
        let one = file("mixed.pem", Self.ca + "\n" + corrupted + "\n", mode: 0o644)
        XCTAssertEqual(error(MQTTTLSSettings(caFile: one)),
                       "cannot use the CA file \(one): 1 of its certificates does not parse (fix or remove it)")
        let two = file("mixed2.pem", corrupted + "\n" + Self.ca + "\n" + corrupted + "\n", mode: 0o644)
        XCTAssertEqual(error(MQTTTLSSettings(caFile: two)),
                       "cannot use the CA file \(two): 2 of its certificates do not parse (fix or remove them)")
        // none parses: Mbed TLS's own reason, as for a file that is no PEM
        let none = file("junk.pem", corrupted, mode: 0o644)
        XCTAssertTrue(error(MQTTTLSSettings(caFile: none))?.hasPrefix("cannot use the CA file \(none): X509 - ") == true,
                      error(MQTTTLSSettings(caFile: none)) ?? "")
    }

    /// Judged before it is read, as the password file is.
    func testAClientKeyEveryUserCanReadIsRefused() {
        let ca = file("ca.pem", Self.ca, mode: 0o644)
        let cert = file("client.pem", Self.clientCert, mode: 0o644), key = file("client.key", Self.clientKey, mode: 0o644)
        guard case .failure(let e) = TLSClientConfig.load(MQTTTLSSettings(caFile: ca, certFile: cert, keyFile: key)) else { return XCTFail("loaded") }
        XCTAssertTrue(e.refused)
        XCTAssertEqual(e.text, "the MQTT client key \(key) is open to every user (mode 0644): refused (chmod o-rwx \(key))")
    }
}
