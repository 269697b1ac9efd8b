import Foundation
import Testing

@testable import ProxyCA

/// The CA's certificates as `openssl` reads and verifies them.
@Suite struct OpenSSLTests {
    /// Writes the CA and a leaf (alone) to `scratch`, then runs `openssl verify` for it with `check`
    /// (`-verify_hostname NAME` or `-verify_ip ADDRESS`).
    func verify(_ ca: ProxyCA, _ leaf: LeafIdentity, in scratch: Scratch, _ check: [String]) throws -> OpenSSL.Outcome {
        let caPath = try scratch.write("ca-\(UUID().uuidString).pem", ca.certificatePEM)
        let leafPath = try scratch.write("leaf-\(UUID().uuidString).pem", firstCertificate(leaf.certificateChainPEM))
        return try OpenSSL.run(["verify", "-x509_strict", "-purpose", "sslserver", "-CAfile", caPath] + check + [leafPath])
    }

    @Test func theCAShowsItsConstraintsAsCriticalAndIsACA() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example", "::1"]))
        let text = try OpenSSL.run(["x509", "-noout", "-text", "-in", scratch.caFolder.appendingPathComponent("ca.pem").path])
        #expect(text.status == 0)
        #expect(text.output.contains("X509v3 Name Constraints: critical"))
        #expect(text.output.contains("DNS:staging.shop.example"))
        #expect(text.output.contains("IP:0:0:0:0:0:0:0:1/FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF"))
        #expect(text.output.contains("X509v3 Basic Constraints: critical") && text.output.contains("CA:TRUE, pathlen:0"))
        #expect(text.output.contains("X509v3 Key Usage: critical") && text.output.contains("Certificate Sign, CRL Sign"))
        #expect(text.output.contains("X509v3 Subject Key Identifier"))
        #expect(text.output.contains("Subject: O = reiterate-shop, CN = reiterate-shop proxy CA ("))
        #expect(text.output.contains("ASN1 OID: prime256v1"))
        #expect(ca.permitted.ipAddresses == ["::1"])
    }

    @Test func theFingerprintIsOpenSSLs() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example"]))
        let printed = try OpenSSL.run(["x509", "-noout", "-fingerprint", "-sha256", "-in", scratch.caFolder.appendingPathComponent("ca.pem").path])
        #expect(printed.output.trimmingCharacters(in: .whitespacesAndNewlines) == "sha256 Fingerprint=\(ca.fingerprintSHA256)")
        let der = try OpenSSL.run(["x509", "-noout", "-fingerprint", "-sha256", "-inform", "PEM", "-in", try scratch.write("again.pem", ca.certificatePEM)])
        #expect(der.output == printed.output)
    }

    @Test func aLeafForACoveredNameVerifiesAndLooksRight() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example", "127.0.0.1"]))
        let leaf = try ca.leaf(for: "staging.shop.example")
        let verified = try verify(ca, leaf, in: scratch, ["-verify_hostname", "staging.shop.example"])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains(": OK"))
        // A subdomain is admitted by the dNSName constraint; another host's name is not the leaf's.
        let sub = try verify(ca, try ca.leaf(for: "api.staging.shop.example"), in: scratch, ["-verify_hostname", "api.staging.shop.example"])
        #expect(sub.status == 0, "\(sub.output)")
        #expect(try verify(ca, leaf, in: scratch, ["-verify_hostname", "api.staging.shop.example"]).status != 0)

        let leafPath = try scratch.write("leaf.pem", firstCertificate(leaf.certificateChainPEM))
        let text = try OpenSSL.run(["x509", "-noout", "-text", "-in", leafPath]).output
        #expect(text.contains("DNS:staging.shop.example"))
        #expect(text.contains("TLS Web Server Authentication"))
        #expect(text.contains("X509v3 Key Usage: critical") && text.contains("Digital Signature"))
        #expect(text.contains("CA:FALSE") && text.contains("X509v3 Authority Key Identifier"))
        #expect(text.contains("Subject: O = reiterate-shop, CN = staging.shop.example"))
        let days = try validityDays(leafPath)
        #expect(days > 396 && days <= 825, "validity \(days) days")

        // The key is PKCS#8 and is the leaf's own.
        #expect(leaf.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let keyPath = try scratch.write("leaf-key.pem", leaf.privateKeyPEM)
        let fromKey = try OpenSSL.run(["pkey", "-in", keyPath, "-pubout"])
        let fromLeaf = try OpenSSL.run(["x509", "-noout", "-pubkey", "-in", leafPath])
        #expect(fromKey.status == 0 && fromKey.output == fromLeaf.output)
        // The chain is the leaf then the CA.
        #expect(leaf.certificateChainPEM.hasSuffix(ca.certificatePEM))
        #expect(!leaf.description.contains("PRIVATE"))
    }

    @Test func aLeafForACoveredAddressVerifies() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example", "127.0.0.1", "[::1]"]))
        for address in ["127.0.0.1", "::1"] {
            let leaf = try ca.leaf(for: address)
            let verified = try verify(ca, leaf, in: scratch, ["-verify_ip", address])
            #expect(verified.status == 0, "\(address): \(verified.output)")
            let text = try OpenSSL.run(["x509", "-noout", "-ext", "subjectAltName", "-in", try scratch.write("ip.pem", leaf.certificateChainPEM)])
            #expect(text.output.contains("IP Address:\(address == "::1" ? "0:0:0:0:0:0:0:1" : address)"))
        }
        // An address-only CA still verifies its address: no DNS name is needed for it.
        let onlyIP = try ProxyCA.renew(folder: scratch.url.appendingPathComponent("ip"), permitted: PermittedNames(hosts: ["127.0.0.1"]))
        #expect(try verify(onlyIP, try onlyIP.leaf(for: "127.0.0.1"), in: scratch, ["-verify_ip", "127.0.0.1"]).status == 0)
    }

    @Test func aCertificateOutsideTheConstraintsIsRejectedByOpenSSL() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example"]))
        #expect(throws: ProxyCAError.hostNotCovered("bank.example")) { try ca.leaf(for: "bank.example") }
        #expect(throws: ProxyCAError.hostNotCovered("10.0.0.1")) { try ca.leaf(for: "10.0.0.1") }
        #expect(throws: ProxyCAError.hostNotCovered("xstaging.shop.example")) { try ca.leaf(for: "xstaging.shop.example") }

        let name = try verify(ca, try ca.uncheckedLeaf(for: "bank.example"), in: scratch, ["-verify_hostname", "bank.example"])
        #expect(name.status != 0)
        #expect(name.output.contains("permitted subtree violation"), "\(name.output)")
        let suffix = try verify(ca, try ca.uncheckedLeaf(for: "xstaging.shop.example"), in: scratch, ["-verify_hostname", "xstaging.shop.example"])
        #expect(suffix.status != 0 && suffix.output.contains("permitted subtree violation"), "\(suffix.output)")
        // No address is permitted, so every address is excluded.
        for address in ["10.0.0.1", "::1"] {
            let ip = try verify(ca, try ca.uncheckedLeaf(for: address), in: scratch, ["-verify_ip", address])
            #expect(ip.status != 0)
            #expect(ip.output.contains("excluded subtree violation"), "\(ip.output)")
        }
    }

    @Test func anAddressOnlyCAAdmitsNoNameAndNoOtherAddress() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["192.168.1.20"]))
        #expect(ca.permitted.dnsNames.isEmpty)  // the `.invalid` stand-in is not read back as a host
        for name in ["bank.example", "x.invalid"] {
            let leaf = try ca.uncheckedLeaf(for: name)
            let outcome = try verify(ca, leaf, in: scratch, ["-verify_hostname", name])
            #expect(outcome.status != 0 && outcome.output.contains("subtree violation"), "\(name): \(outcome.output)")
        }
        let other = try verify(ca, try ca.uncheckedLeaf(for: "192.168.1.21"), in: scratch, ["-verify_ip", "192.168.1.21"])
        #expect(other.status != 0 && other.output.contains("permitted subtree violation"), "\(other.output)")
    }

    /// Days between the certificate's notBefore and notAfter, as openssl prints them.
    func validityDays(_ path: String) throws -> Double {
        let printed = try OpenSSL.run(["x509", "-noout", "-dates", "-dateopt", "iso_8601", "-in", path]).output
        let formatter = ISO8601DateFormatter()
        var dates: [String: Date] = [:]
        for line in printed.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            dates[parts[0]] = formatter.date(from: parts[1].replacingOccurrences(of: " ", with: "T"))
        }
        guard let start = dates["notBefore"], let end = dates["notAfter"] else { return -1 }
        return end.timeIntervalSince(start) / 86_400
    }
}
