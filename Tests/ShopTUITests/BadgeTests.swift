import Foundation
import ShopAPI
import Testing
@testable import ShopTUI
@testable import ShopViewModels

/// The header's badge says the environment's tier, not what its name looks like.
@Suite struct BadgeTests {
    func header(_ environment: String, _ tier: Tier?) -> (text: String, badge: (String, Style)) {
        var app = loadedState(environment: environment)
        app.context = ShopContext(environment: environment, tier: tier, baseURL: app.context.baseURL, user: app.context.user)
        return (Renderer.render(frame(app, width: 120, height: 40)).row(0), Renderer.badge(app.context))
    }

    @Test func aStagingTierShowsTheStagingBadgeWhateverTheName() {
        let (row, badge) = header("prod-like", .staging)
        #expect(badge.0 == " STAGING · PROD-LIKE " && badge.1.foreground == .warning)
        #expect(row.contains(" STAGING · PROD-LIKE ") && !row.contains("⚠"))
    }

    @Test func aProductionTierShowsTheProductionBadgeWhateverTheName() {
        let (row, badge) = header("x", .production)
        #expect(badge.0 == " ⚠ X " && badge.1.foreground == .danger)
        #expect(row.contains(" ⚠ X "))
    }

    /// Without a tier, as before: the name decides (`Tier.named`).
    @Test func withoutATierTheNameDecides() {
        #expect(header("staging", nil).badge.0 == " STAGING " && header("staging", nil).badge.1.foreground == .warning)
        #expect(header("local", nil).badge.0 == " LOCAL " && header("local", nil).badge.1.foreground == .good)
        #expect(header("next-build", nil).badge.0 == " ⚠ NEXT-BUILD ")
    }
}
