import Foundation

/// How characters outside ASCII take part in words, folded once each and remembered.
enum ScalarFolding {
    enum Kind: Sendable {
        case word(String)
        case apostrophe
        case separator
    }

    nonisolated(unsafe) private static var cache: [UInt32: Kind] = [:]
    private static let lock = NSLock()

    static func fold(_ scalar: Unicode.Scalar) -> Kind {
        if let known = lock.withLock({ cache[scalar.value] }) { return known }
        let kind: Kind
        if scalar == "\u{2019}" || scalar == "\u{02BC}" {
            kind = .apostrophe
        } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
            let folded = String(Character(scalar)).folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            kind = folded.isEmpty ? .separator : .word(folded)
        } else if scalar.properties.generalCategory == .nonspacingMark {
            kind = .word("")
        } else {
            kind = .separator
        }
        lock.withLock { cache[scalar.value] = kind }
        return kind
    }
}
