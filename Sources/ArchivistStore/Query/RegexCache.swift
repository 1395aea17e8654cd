import ArchivistBase
import Foundation
import Synchronization

/// Compiled regular expressions, kept per pattern and options.
enum RegexCache {
    private static let cache = Mutex<[String: NSRegularExpression]>([:])

    static func expression(_ pattern: String, options: String) -> NSRegularExpression? {
        let key = options + "/" + pattern
        if let cached = cache.withLock({ $0[key] }) { return cached }
        var flags: NSRegularExpression.Options = []
        if options.contains("i") { flags.insert(.caseInsensitive) }
        if options.contains("m") { flags.insert(.anchorsMatchLines) }
        if options.contains("s") { flags.insert(.dotMatchesLineSeparators) }
        if options.contains("x") { flags.insert(.allowCommentsAndWhitespace) }
        // An empty pattern matches everything (NSRegularExpression refuses it on Linux).
        guard let expression = try? NSRegularExpression(pattern: pattern.isEmpty ? "(?:)" : pattern, options: flags) else { return nil }
        cache.withLock { $0[key] = expression }
        return expression
    }
}
