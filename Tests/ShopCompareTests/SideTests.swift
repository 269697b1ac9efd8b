import ShopCompare
import Testing

/// A side of a comparison is a type once read: `env:`, `user:`, both, or a file's path.
@Suite struct SideTests {
    @Test func sidesAreReadByTheirFormAndWrittenBackAsGiven() throws {
        #expect(try CompareSide.parse("env:next") == .live(env: "next", user: nil))
        #expect(try CompareSide.parse("user:qa-bob") == .live(env: nil, user: "qa-bob"))
        #expect(try CompareSide.parse("env:next/user:qa-bob") == .live(env: "next", user: "qa-bob"))
        #expect(try CompareSide.parse("/tmp/s.json") == .file("/tmp/s.json"))
        for text in ["env:next", "user:qa-bob", "env:next/user:qa-bob", "snap.har"] { #expect(try CompareSide.parse(text).description == text) }
        for bad in ["env:", "user:", "env:a/env:b", "env:a/x", "user:a/"] {
            #expect(throws: CompareSide.Malformed.self) { try CompareSide.parse(bad) }
        }
    }

    @Test func anEnvironmentAloneIsReadAsTheSameUser() throws {
        #expect(try CompareSide.parse("env:next").defaultingUser("qa-alice") == .live(env: "next", user: "qa-alice"))
        #expect(try CompareSide.parse("env:next/user:qa-bob").defaultingUser("qa-alice") == .live(env: "next", user: "qa-bob"))
        #expect(try CompareSide.parse("user:qa-bob").defaultingUser("qa-alice") == .live(env: nil, user: "qa-bob"))
        #expect(CompareSide.file("a.json").defaultingUser("qa-alice") == .file("a.json"))
    }
}
