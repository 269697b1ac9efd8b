/// The Audio Packs on sale: a hand-written list of realistic packs whose numbers (price, samples,
/// duration, cheer, release date, extra tags) and shop order come from the seed.
public enum Catalog {
    struct Base {
        let slug: String
        let name: String
        let creator: String
        let tag: String
        let blurb: String
    }

    static let bases: [Base] = [
        Base(slug: "rain", name: "Rain on a Tin Roof", creator: "Field & Foley", tag: "rain", blurb: "Steady rain on corrugated metal, close and wide."),
        Base(slug: "cafe-flore", name: "Café de Flore Mornings", creator: "Amélie Durand", tag: "café", blurb: "Espresso machines, saucers and soft French chatter à 8 h."),
        Base(slug: "tokyo-night", name: "東京 Night Walk", creator: "佐藤 健二", tag: "city", blurb: "渋谷 crossings, vending machines and distant trains after midnight."),
        Base(slug: "ocean-drift", name: "Ocean Drift 🌊", creator: "Tidewater Audio", tag: "ocean", blurb: "Slow swells on a pebble beach 🌊, recorded at dawn."),
        Base(slug: "forest-thunder", name: "Forest After Thunder", creator: "Greenroom Sound", tag: "forest", blurb: "Dripping leaves and retreating thunder in an old beech wood."),
        Base(slug: "lofi-study-3", name: "Lo-Fi Study Beats Vol. 3", creator: "Nightshift Collective", tag: "music", blurb: "Dusty drums, warm keys, no vocals."),
        Base(slug: "fireplace", name: "Crackling Fireplace", creator: "Hearthside", tag: "fire", blurb: "Oak logs in a stone hearth, with the odd pop."),
        Base(slug: "fjord-wind", name: "Nordic Fjord Wind", creator: "Åsa Lindqvist", tag: "wind", blurb: "Gusts over Sognefjord, captured from a wooden pier."),
        Base(slug: "sao-paulo-market", name: "São Paulo Street Market", creator: "João Ribeiro", tag: "city", blurb: "Feira livre vendors calling out prices, pastel frying."),
        Base(slug: "zurich-tram", name: "Zürich Tram Lines", creator: "Jürg Meier", tag: "transport", blurb: "Bells, doors and overhead wires along the Bahnhofstrasse."),
        Base(slug: "seoul-rain-cafe", name: "서울 Rainy Café", creator: "박민지", tag: "café", blurb: "빗소리 on the window of a small café in Mapo."),
        Base(slug: "beijing-hutong", name: "北京 Hutong Dawn", creator: "李伟", tag: "city", blurb: "Bicycles, birdcages and a street breakfast stall waking up."),
        Base(slug: "desert-crickets", name: "Desert Night Crickets", creator: "Mojave Field Lab", tag: "night", blurb: "A clear desert night, crickets and a far coyote."),
        Base(slug: "deep-space", name: "Deep Space Hum 🚀", creator: "Orbital Drones", tag: "drone", blurb: "Low synthetic drones for long focus sessions 🚀."),
        Base(slug: "piano-d", name: "Piano Sketches in D", creator: "Clara Hoffmann", tag: "music", blurb: "Felt piano improvisations, close-miked."),
        Base(slug: "singing-bowls", name: "Tibetan Singing Bowls", creator: "Himalaya Sound", tag: "meditation", blurb: "Hand-hammered bowls, struck and rubbed."),
        Base(slug: "prairie-storm", name: "Thunderstorm on the Prairie", creator: "Big Sky Recordings", tag: "rain", blurb: "A summer storm rolling across open grassland."),
        Base(slug: "library", name: "Library Ambience", creator: "Quiet Rooms", tag: "indoor", blurb: "Page turns, a distant cough, the hum of old lights."),
        Base(slug: "birdsong", name: "Morning Birdsong 🐦", creator: "Dawn Chorus Co.", tag: "birds", blurb: "Blackbirds, wrens and robins at first light 🐦."),
        Base(slug: "vinyl-crackle", name: "Vinyl Crackle Textures", creator: "Dusty Grooves", tag: "texture", blurb: "Run-out grooves and surface noise from 40 old records."),
        Base(slug: "subway-7", name: "Subway Platform, Line 7", creator: "Urban Field Notes", tag: "transport", blurb: "Arrivals, announcements and a busker two stairs up."),
        Base(slug: "campfire-lake", name: "Campfire by the Lake", creator: "Field & Foley", tag: "fire", blurb: "A small fire, loons across the water."),
        Base(slug: "kyoto-garden", name: "Kyoto Temple Garden 庭", creator: "山田 花子", tag: "meditation", blurb: "Raked gravel, a shishi-odoshi and cicadas in 京都."),
        Base(slug: "brown-noise", name: "Brown Noise for Focus", creator: "Nightshift Collective", tag: "noise", blurb: "Deep brown noise, loop-safe."),
        Base(slug: "mumbai-rain", name: "Heavy Rain in Mumbai", creator: "Priya Raman", tag: "rain", blurb: "Monsoon downpour on a balcony in Bandra."),
        Base(slug: "whale-song", name: "Whale Song Recordings 🐋", creator: "Tidewater Audio", tag: "ocean", blurb: "Humpback songs from a hydrophone off Maui 🐋."),
        Base(slug: "mech-keyboard", name: "Mechanical Keyboard ASMR ⌨️", creator: "Clicky Labs", tag: "asmr", blurb: "Tactile switches, lubed and unlubed ⌨️."),
        Base(slug: "reykjavik-snow", name: "Snowfall in Reykjavík", creator: "Sigrún Jónsdóttir", tag: "winter", blurb: "Muffled streets and footsteps in fresh snow."),
        Base(slug: "jazz-midnight", name: "Jazz Club at Midnight", creator: "Basement Session Band", tag: "music", blurb: "Brushes, upright bass and glasses clinking."),
        Base(slug: "bamboo-fountain", name: "Bamboo Water Fountain", creator: "Zen Garden Audio", tag: "water", blurb: "A trickling bamboo spout over a stone basin."),
        Base(slug: "cathedral-organ", name: "Cathedral Organ Drones", creator: "Notre Sound Works", tag: "drone", blurb: "Sustained pedal tones in a stone nave."),
        Base(slug: "coffee-chatter", name: "Coffee Shop Chatter", creator: "Quiet Rooms", tag: "café", blurb: "Unintelligible conversation and a milk steamer."),
        Base(slug: "wind-chimes", name: "Wind Chimes on the Porch", creator: "Greenroom Sound", tag: "wind", blurb: "Bamboo and brass chimes in a light breeze."),
        Base(slug: "provence-cicadas", name: "Cicadas in Provence", creator: "Élodie Marchand", tag: "summer", blurb: "Cigales in the lavender fields near Apt, l'après-midi."),
        Base(slug: "arctic-ice", name: "Arctic Ice Crack", creator: "Polar Field Lab", tag: "winter", blurb: "Sea ice shifting and singing under the hydrophone."),
        Base(slug: "analog-pads", name: "Analog Synth Pads", creator: "Modular Mike", tag: "drone", blurb: "Slow filter sweeps from a patched modular."),
        Base(slug: "night-train", name: "Überlandfahrt: Night Train", creator: "Jürg Meier", tag: "transport", blurb: "Rails, couplings and a sleeper cabin through the Alps."),
        Base(slug: "gamelan", name: "Gamelan Morning", creator: "Wayan Sudarma", tag: "music", blurb: "A Balinese gamelan rehearsal in an open pavilion."),
        Base(slug: "rainforest", name: "Rainforest Canopy 🌿", creator: "Amazonia Sound", tag: "forest", blurb: "Howler monkeys, frogs and rain high in the canopy 🌿."),
        Base(slug: "bangkok-market", name: "Bangkok Evening Market ตลาด", creator: "สมชาย วงศ์สกุล", tag: "city", blurb: "ตลาดนัด woks, tuk-tuks and bargaining at dusk."),
        Base(slug: "harbour-fog", name: "Harbour Foghorns", creator: "Tidewater Audio", tag: "ocean", blurb: "Foghorns and halyards in a grey harbour."),
        Base(slug: "white-noise", name: "White Noise Classic", creator: "Nightshift Collective", tag: "noise", blurb: "Plain white noise, three intensities."),
        Base(slug: "heartbeat", name: "Heartbeat & Breath", creator: "Calm Body Audio", tag: "meditation", blurb: "A slow resting heartbeat with paced breathing."),
        Base(slug: "mountain-stream", name: "Mountain Stream Flow", creator: "Field & Foley", tag: "water", blurb: "Snowmelt over granite, from three distances."),
        Base(slug: "greek-coast", name: "Ὠκεανός: Greek Coast", creator: "Νίκος Παπαδάκης", tag: "ocean", blurb: "Waves in a cove near Χανιά, cicadas behind."),
        Base(slug: "synthwave-drive", name: "Midnight Drive Synthwave 🌃", creator: "Neon Arcade", tag: "music", blurb: "Gated drums and arpeggios for the night road 🌃."),
    ]

    static let extraTags = ["sleep", "focus", "relax", "ambient", "nature", "loop", "binaural", "field-recording", "lo-fi", "stereo"]
    static let prices = [0, 99, 199, 299, 499, 999, 1499]

    /// The packs in shop order, the same for the same seed.
    public static func packs(seed: UInt64) -> [AudioPack] {
        var rng = SeededGenerator(seed: SeededGenerator.mix(seed ^ 0xA0D1_0FAC))
        let earliest = ISODate.epoch(year: 2022, month: 1, day: 10)
        var packs = bases.map { base -> AudioPack in
            var tags = [base.tag]
            for _ in 0..<rng.int(in: 1...3) {
                let tag = rng.pick(extraTags)
                if !tags.contains(tag) { tags.append(tag) }
            }
            let samples = rng.int(in: 6...240)
            return AudioPack(
                identifier: "com.reiterate.pack.\(base.slug)",
                name: base.name,
                creator: base.creator,
                description: "\(base.blurb) \(samples) samples by \(base.creator).",
                priceCents: rng.pick(prices),
                currency: "USD",
                sampleCount: samples,
                durationSeconds: rng.int(in: 4...120) * 60 + rng.int(in: 0...59),
                cheerTotal: rng.chance(0.1) ? 0 : rng.int(in: 5...48_000),
                released: earliest + Int64(rng.int(in: 0...1_750)) * 86_400 + Int64(rng.int(in: 0...86_399)),
                tags: tags
            )
        }
        packs.shuffle(using: &rng)
        return packs
    }
}
