import ArchivistBase

extension ArticleGenerator {
    /// The crops of a 2018-2019 lead image as the API lists them (subtype, crop name, width,
    /// height): the 68 of `nyt-samples/03_2018_transition_1doc_many_crops.json`.
    static let fullCropSet: [(subtype: String, crop: String, width: Int, height: Int)] = [
        ("xlarge", "articleLarge", 600, 400), ("wide", "thumbWide", 190, 126), ("thumbnail", "thumbStandard", 75, 75),
        ("articleInline", "articleInline", 190, 127), ("blog225", "blog225", 225, 150),
        ("blog427", "blog427", 427, 285), ("blog480", "blog480", 480, 320), ("blog533", "blog533", 533, 355),
        ("blogSmallInline", "blogSmallInline", 151, 101), ("blogSmallThumb", "blogSmallThumb", 50, 50),
        ("facebookJumbo", "facebookJumbo", 1050, 550), ("filmstrip", "filmstrip", 190, 190),
        ("hpLarge", "hpLarge", 511, 287), ("hpSmall", "hpSmall", 163, 109), ("jumbo", "jumbo", 1024, 683),
        ("largeHorizontal375", "largeHorizontal375", 375, 250),
        ("largeHorizontalJumbo", "largeHorizontalJumbo", 1024, 683),
        ("largeWidescreen573", "largeWidescreen573", 573, 322),
        ("largeWidescreen1050", "largeWidescreen1050", 1050, 591), ("master1050", "master1050", 1050, 700),
        ("master180", "master180", 180, 120), ("master315", "master315", 315, 210),
        ("master495", "master495", 495, 330), ("master768", "master768", 768, 512),
        ("master675", "master675", 675, 450), ("mediumFlexible177", "mediumFlexible177", 177, 118),
        ("mediumSquare149", "mediumSquare149", 149, 149), ("mediumThreeByTwo210", "mediumThreeByTwo210", 210, 140),
        ("mediumThreeByTwo225", "mediumThreeByTwo225", 225, 150),
        ("mediumThreeByTwo440", "mediumThreeByTwo440", 440, 293),
        ("mediumThreeByTwo378", "mediumThreeByTwo378", 378, 252),
        ("mediumThreeByTwo252", "mediumThreeByTwo252", 252, 168), ("miniMoth", "miniMoth", 151, 70),
        ("moth", "moth", 151, 151), ("popup", "popup", 650, 433), ("sfSpan", "sfSpan", 395, 263),
        ("slide", "slide", 600, 400), ("smallSquare168", "smallSquare168", 168, 168),
        ("smallSquare252", "smallSquare252", 252, 252), ("square320", "square320", 320, 320),
        ("square640", "square640", 640, 640), ("superJumbo", "superJumbo", 2048, 1365),
        ("thumbLarge", "thumbLarge", 150, 150), ("tmagArticle", "tmagArticle", 592, 395),
        ("tmagSF", "tmagSF", 362, 241), ("verticalTwoByThree735", "verticalTwoByThree735", 735, 1103),
        ("videoFifteenBySeven1305", "videoFifteenBySeven1305", 1305, 609),
        ("videoFifteenBySeven2610", "videoFifteenBySeven2610", 2610, 1218),
        ("videoHpMedium", "videoHpMedium", 375, 211), ("videoLarge", "videoLarge", 768, 507),
        ("videoSixteenByNine1050", "videoSixteenByNine1050", 1050, 591),
        ("videoSixteenByNine150", "videoSixteenByNine150", 150, 84),
        ("videoSixteenByNine225", "videoSixteenByNine225", 225, 126),
        ("videoSixteenByNine3000", "videoSixteenByNine3000", 3000, 1687),
        ("videoSixteenByNine310", "videoSixteenByNine310", 310, 174),
        ("videoSixteenByNine390", "videoSixteenByNine390", 390, 219),
        ("videoSixteenByNine480", "videoSixteenByNine480", 480, 270),
        ("videoSixteenByNine495", "videoSixteenByNine495", 495, 278),
        ("videoSixteenByNine540", "videoSixteenByNine540", 540, 304),
        ("videoSixteenByNine600", "videoSixteenByNine600", 600, 338),
        ("videoSixteenByNine768", "videoSixteenByNine768", 768, 432),
        ("videoSixteenByNine96", "videoSixteenByNine96", 96, 54),
        ("videoSixteenByNineJumbo1600", "videoSixteenByNineJumbo1600", 1600, 900),
        ("videoSmall", "videoSmall", 500, 281), ("videoThumb", "videoThumb", 75, 50),
        ("watch268", "watch268", 272, 303), ("watch308", "watch308", 312, 348),
        ("windowsTile336H", "windowsTile336H", 694, 336),
    ]

    /// `documents` with the lead image's complete crop set (``fullCropSet``, some 19 KB of JSON)
    /// in `percent` of those whose `multimedia` is a list of crops (the 2019 shape with an
    /// image); the others are unchanged, byte for byte.
    ///
    /// The generated 2019 shape lists two or three crops; the real API of 2018-2019 lists all of
    /// them for most articles with an image, which is why its months run to 90 MB. Which documents
    /// get them depends only on `seed` and their positions.
    public static func withFullCropSets(_ documents: [JSONValue], percent: Int, seed: UInt64) -> [JSONValue] {
        guard percent > 0 else { return documents }
        return documents.enumerated().map { position, document in
            guard SplitMix64.mix(seed ^ 0x6A09_E667_F3BC_C908 ^ UInt64(position)) % 100 < UInt64(min(100, percent)),
                case .array(let listed)? = document["multimedia"], let first = listed.first,
                first["crop_name"] != nil, case .string(let lead)? = first["url"]
            else { return document }
            return document.setting("multimedia", to: .array(fullCrops(listed, lead: lead)))
        }
    }

    /// The full crop set of an image whose first crop's URL is `lead`
    /// (`images/…/merlin_…-articleLarge.jpg`); crops already listed keep their URLs.
    private static func fullCrops(_ listed: [JSONValue], lead: String) -> [JSONValue] {
        var known: [String: String] = [:]
        for crop in listed {
            if case .string(let name)? = crop["crop_name"], case .string(let url)? = crop["url"] { known[name] = url }
        }
        let stem = lead.hasSuffix("-articleLarge.jpg") ? String(lead.dropLast("-articleLarge.jpg".count)) : lead
        return fullCropSet.map { subtype, name, width, height in
            crop(subtype: subtype, name: name, width: width, height: height, url: known[name] ?? "\(stem)-\(name).jpg")
        }
    }
}
