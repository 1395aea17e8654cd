import Foundation
import Synchronization

/// How characters outside ASCII take part in words, folded once each and remembered.
enum ScalarFolding {
    enum Kind: Sendable {
        case word(String)
        case apostrophe
        case separator
    }

    private static let cache = Mutex<[UInt32: Kind]>([:])

    static func fold(_ scalar: Unicode.Scalar) -> Kind {
        if let known = cache.withLock({ $0[scalar.value] }) { return known }
        let kind: Kind
        if scalar == "\u{2019}" || scalar == "\u{02BC}" {
            kind = .apostrophe
        } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
            let folded = String(Character(scalar)).folding(
                options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            kind = folded.isEmpty ? .separator : .word(folded)
        } else if scalar.properties.generalCategory == .nonspacingMark {
            kind = .word("")
        } else {
            kind = .separator
        }
        cache.withLock { $0[scalar.value] = kind }
        return kind
    }
}
