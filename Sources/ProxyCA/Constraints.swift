import SwiftASN1
import X509

/// Writing `PermittedNames` as an RFC 5280 name constraints extension, and reading it back.
extension PermittedNames {
    /// A permitted dNSName that no real host is under (RFC 6761 reserves `.invalid`): with only IP
    /// addresses permitted it keeps every DNS name out, as the excluded empty name does for verifiers
    /// that read "" as every name.
    static let noDNSName = "invalid"

    /// Permits exactly these names; a kind with nothing permitted is excluded as a whole (all IPv4
    /// and IPv6 addresses, every DNS name), since a constraint on one kind leaves the other kinds free.
    var nameConstraints: NameConstraints {
        let addresses = ipAddresses.compactMap(IPAddress.init(literal:))
        var permitted = dnsNames.map { GeneralName.dnsName($0) }
        permitted += addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0.bytes + $0.bytes.map { _ in 0xFF }))) }
        var excluded: [GeneralName] = []
        if dnsNames.isEmpty {
            permitted.append(.dnsName(Self.noDNSName))
            excluded.append(.dnsName(""))
        }
        if addresses.isEmpty {
            excluded.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 8)))))
            excluded.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 32)))))
        }
        return NameConstraints(permittedSubtrees: permitted, excludedSubtrees: excluded)
    }

    /// The hosts a CA's name constraints permit: its dNSNames (but the `.invalid` stand-in) and its
    /// single-address IP ranges; nil unless the constraints are exactly what `nameConstraints` makes
    /// of those hosts (so a CA that permits more, or excludes less, is never taken as this proxy's).
    init?(_ constraints: NameConstraints) {
        var names: [HostName] = []
        for subtree in constraints.permittedSubtrees {
            switch subtree {
            case .dnsName(let name) where name != Self.noDNSName:
                guard let host = HostName(name), case .dns = host else { return nil }
                names.append(host)
            case .ipAddress(let range):
                let bytes = Array(range.bytes)
                guard let address = IPAddress(bytes: Array(bytes.prefix(bytes.count / 2))) else { return nil }
                names.append(.ip(address))
            default:
                continue
            }
        }
        self.init(names)
        guard !isEmpty, nameConstraints == constraints else { return nil }
    }
}
