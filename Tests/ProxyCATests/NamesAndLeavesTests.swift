import Foundation
import Testing

@testable import ProxyCA

@Suite struct PermittedNamesTests {
    @Test func hostsAreSplitAndNormalized() throws {
        let names = PermittedNames(hosts: [
            "Staging.Shop.Example.", "[::1]", "127.0.0.1", "staging.shop.example", "*.api.example", "not a host", "0:0::1", "",
        ])
        #expect(names.dnsNames == ["api.example", "staging.shop.example"])
        #expect(names.ipAddresses == ["127.0.0.1", "::1"])
        let decoded = try JSONDecoder().decode(PermittedNames.self, from: JSONEncoder().encode(names))
        #expect(decoded == names)
    }

    @Test func coversMeansWhatTheConstraintsLetThrough() {
        let names = PermittedNames(hosts: ["staging.shop.example", "127.0.0.1", "::1"])
        #expect(names.covers("staging.shop.example") && names.covers("STAGING.shop.example."))
        #expect(names.covers("api.staging.shop.example"))
        #expect(!names.covers("xstaging.shop.example") && !names.covers("shop.example"))
        #expect(names.covers("127.0.0.1") && !names.covers("127.0.0.2"))
        #expect(names.covers("[::1]") && names.covers("0:0:0:0:0:0:0:1") && !names.covers("::2"))
        #expect(!names.covers("") && !names.covers("staging.shop.example/path"))
        #expect(!PermittedNames(hosts: ["127.0.0.1"]).covers("localhost"))
    }

    @Test func anUncoveredHostIsNamedInOnePrintableLine() {
        let words = ProxyCAError.hostNotCovered("evil\u{1B}[2J\n.example").description
        #expect(words.contains("evil[2J.example") && words.contains("--renew"))
        #expect(!words.contains("\u{1B}") && !words.contains("\n"))
    }
}

@Suite struct LeafTests {
    @Test func aLeafIsMadeOncePerHostAndRemadeNearItsEnd() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example"]))
        let first = try ca.leaf(for: "staging.shop.example")
        let again = try ca.leaf(for: "Staging.Shop.Example")
        #expect(first.certificateChainPEM == again.certificateChainPEM && first.privateKeyPEM == again.privateKeyPEM)
        let other = try ca.leaf(for: "api.staging.shop.example")
        #expect(other.certificateDER != first.certificateDER)
        let later = try ca.leaf(for: "staging.shop.example", now: first.notAfter.addingTimeInterval(-3600))
        #expect(later.certificateDER != first.certificateDER && later.notAfter > first.notAfter)
    }

    @Test func manyTasksAskingAtOnceGetOneLeafPerHost() async throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let hosts = ["a.shop.example", "b.shop.example", "c.shop.example", "127.0.0.1"]
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["shop.example", "127.0.0.1"]))
        let results = try await withThrowingTaskGroup(of: (String, [UInt8]).self) { group in
            for index in 0..<64 {
                let host = hosts[index % hosts.count]
                group.addTask { (host, try ca.leaf(for: host).certificateDER) }
            }
            var all: [(String, [UInt8])] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 64)
        let byHost = Dictionary(grouping: results, by: \.0).mapValues { Set($0.map(\.1)) }
        #expect(byHost.count == hosts.count && byHost.values.allSatisfy { $0.count == 1 })
    }
}

@Suite struct MobileconfigTests {
    @Test func theProfileIsAPlistHoldingTheCertificateAndStaysTheSame() throws {
        let scratch = Scratch()
        defer { scratch.remove() }
        let ca = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: PermittedNames(hosts: ["staging.shop.example", "10.0.0.5"]))
        let text = ca.mobileconfig()
        let plist = try PropertyListSerialization.propertyList(from: Data(text.utf8), format: nil)
        let profile = try #require(plist as? [String: Any])
        #expect(profile["PayloadType"] as? String == "Configuration")
        #expect(profile["PayloadDisplayName"] as? String == "reiterate-shop proxy CA")
        #expect(profile["PayloadVersion"] as? Int == 1)
        let description = try #require(profile["PayloadDescription"] as? String)
        #expect(description.contains("staging.shop.example") && description.contains("10.0.0.5"))
        let payloads = try #require(profile["PayloadContent"] as? [[String: Any]])
        #expect(payloads.count == 1)
        #expect(payloads.first?["PayloadType"] as? String == "com.apple.security.root")
        #expect(payloads.first?["PayloadContent"] as? Data == Data(ca.certificateDER))
        let uuids = [profile["PayloadUUID"], payloads.first?["PayloadUUID"]].compactMap { $0 as? String }
        #expect(uuids.count == 2 && Set(uuids).count == 2 && uuids.allSatisfy { UUID(uuidString: $0) != nil })

        let reloaded = try ProxyCA.loadOrCreate(folder: scratch.caFolder, permitted: ca.permitted)
        #expect(reloaded.mobileconfig() == text)
        let renewed = try ProxyCA.renew(folder: scratch.caFolder, permitted: ca.permitted)
        let renewedProfile = try PropertyListSerialization.propertyList(from: Data(renewed.mobileconfig().utf8), format: nil) as? [String: Any]
        #expect(renewedProfile?["PayloadUUID"] as? String != profile["PayloadUUID"] as? String)
        #expect(renewedProfile?["PayloadIdentifier"] as? String != profile["PayloadIdentifier"] as? String)
    }
}
