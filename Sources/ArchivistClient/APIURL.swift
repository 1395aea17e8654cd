import Foundation

/// Builds the URLs of the NYT APIs: a path under a base URL, with query items.
enum APIURL {
    /// `base` + `path` with `items` as the query; nil when `base` is not an http(s) URL with a host
    /// and without a query or fragment of its own.
    static func make(base: String, path: String, items: [URLQueryItem]) -> URL? {
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard var components = URLComponents(string: trimmed + path),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            components.host?.isEmpty == false, components.query == nil, components.fragment == nil
        else { return nil }
        components.queryItems = items
        // URLComponents leaves `+`, `:` and the like as they are; a `+` would read as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url
    }
}
