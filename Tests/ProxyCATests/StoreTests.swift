import Foundation
import Testing

@testable import ProxyCA

@Suite struct StoreTests {
    let permitted = PermittedNames(hosts: ["staging.shop.example", "127.0.0.1"])

    @Test func theKeyIsPrivateTheFolderIsTheOwnersAndLoadingAgainGivesTheSameCA() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let made = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        #expect(try mode(scratch.caFolder.path) == 0o700)
        #expect(try mode(scratch.caFolder.appendingPathComponent("ca-key.pem").path) == 0o600)
        #expect(try mode(scratch.caFolder.appendingPathComponent("ca.pem").path) == 0o644)
        let key = try String(contentsOf: scratch.caFolder.appendingPathComponent("ca-key.pem"), encoding: .utf8)
        #expect(key.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(!made.description.contains("PRIVATE") && !String(describing: Mirror(reflecting: made).children.map(\.label)).contains("key"))

        let loaded = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["other.example"]))
        #expect(loaded.fingerprintSHA256 == made.fingerprintSHA256)
        #expect(loaded.certificatePEM == made.certificatePEM)
        #expect(loaded.permitted == permitted)  // read back from the certificate, not from the argument
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.caFolder.path).sorted()
        #expect(files == ["ca-key.pem", "ca.pem"])  // no temporary file left behind
    }

    @Test func aKeyFileOthersCanReadIsRefusedInPlainWords() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        _ = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        let keyPath = scratch.caFolder.appendingPathComponent("ca-key.pem").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)
        let error = #expect(throws: ProxyCAError.self) {
            try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        }
        #expect(error == .keyFileTooOpen(mode: 0o644))
        let words = error?.description ?? ""
        #expect(words.contains("chmod 600") && words.contains("--renew") && words.contains("644"))
        #expect(!words.contains(scratch.url.path) && !words.contains("\n"))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        #expect(throws: Never.self) { try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted) }
    }

    @Test func renewReplacesTheCAAndKeepsTheKeyPrivate() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let old = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        let wider = PermittedNames(hosts: ["staging.shop.example", "api.shop.example"])
        let new = try ProxyCA.renew(folder: scratch.caFolder, permitted: wider)
        #expect(new.fingerprintSHA256 != old.fingerprintSHA256)
        #expect(try mode(scratch.caFolder.appendingPathComponent("ca-key.pem").path) == 0o600)
        let loaded = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        #expect(loaded.fingerprintSHA256 == new.fingerprintSHA256 && loaded.permitted == wider)
        #expect(old.uncovered(["api.shop.example"]) == ["api.shop.example"] && loaded.uncovered(["api.shop.example"]).isEmpty)
    }

    @Test func damagedHalfMissingExpiredAndEmptyAreRefused() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        #expect(throws: ProxyCAError.nothingPermitted) {
            try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["not a host"]))
        }
        let made = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        let elevenYears = Date().addingTimeInterval(11 * 366 * 86_400)
        #expect(throws: ProxyCAError.expired) {
            try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted, now: elevenYears)
        }

        let certificate = scratch.caFolder.appendingPathComponent("ca.pem")
        try "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".write(to: certificate, atomically: true, encoding: .utf8)
        #expect(throws: ProxyCAError.corrupt) { try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted) }

        // Another CA's certificate beside this key: the key does not belong to it.
        let other = try ProxyCA.renew(folder: scratch.url.appendingPathComponent("other"), permitted: permitted)
        try other.certificatePEM.write(to: certificate, atomically: true, encoding: .utf8)
        #expect(throws: ProxyCAError.corrupt) { try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted) }

        try FileManager.default.removeItem(at: certificate)
        #expect(throws: ProxyCAError.incomplete) { try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted) }
        #expect(made.fingerprintSHA256 != other.fingerprintSHA256)
    }

    @Test func aCANotLimitedByNameConstraintsIsNotUsed() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        try FileManager.default.createDirectory(at: scratch.caFolder, withIntermediateDirectories: true)
        let key = scratch.caFolder.appendingPathComponent("ca-key.pem").path
        let made = try OpenSSL.run([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=unconstrained",
            "-days", "30", "-keyout", key, "-out", scratch.caFolder.appendingPathComponent("ca.pem").path,
        ])
        #expect(made.status == 0, "\(made.output)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        #expect(throws: ProxyCAError.notNameConstrained) {
            try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: permitted)
        }
    }

    @Test func aFolderThatCannotBeMadeSaysSo() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let file = try scratch.write("plain-file", "x")
        let inside = URL(fileURLWithPath: file).appendingPathComponent("ca", isDirectory: true)
        #expect(throws: ProxyCAError.folderNotWritable) { try ProxyCA.loadOrCreate(folder: inside, permitted: permitted) }
    }

    @Test func theDefaultFolderFollowsXDGStateHome() {
        #expect(ProxyCA.defaultFolder(environment: ["HOME": "/home/qa"])?.path == "/home/qa/.local/state/reiterate-shop/proxy-ca")
        #expect(ProxyCA.defaultFolder(environment: ["HOME": "/home/qa", "XDG_STATE_HOME": "/var/qa"])?.path == "/var/qa/reiterate-shop/proxy-ca")
        #expect(ProxyCA.defaultFolder(environment: ["HOME": "/home/qa", "XDG_STATE_HOME": "relative"])?.path == "/home/qa/.local/state/reiterate-shop/proxy-ca")
        #expect(ProxyCA.defaultFolder(environment: [:]) == nil && ProxyCA.defaultFolder(environment: ["HOME": ""]) == nil)
    }
}
