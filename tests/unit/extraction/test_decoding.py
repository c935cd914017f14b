"""Charset choice and decoding: header, meta, BOM, detection, legacy charsets."""

from __future__ import annotations

from scrapejobs_shared.extraction import choose_charset, decode_body
from scrapejobs_shared.extraction.charset_labels import codec_for_label

FRENCH = "Le café coûte 3 € au déjeuner, près de l'église où nous étions."
RUSSIAN = "Привет, мир! Это тестовая страница на русском языке."
JAPANESE = "日本語のテキストです。文字コードを確認します。"


def test_header_charset_wins_over_a_wrong_meta():
    body = f'<meta charset="utf-8"><p>{FRENCH}</p>'.encode("cp1252")
    decoded = decode_body(body, "text/html; charset=windows-1252")
    assert (decoded.codec, decoded.source) == ("cp1252", "header")
    assert FRENCH in decoded.text


def test_iso_8859_1_label_decodes_as_windows_1252():
    body = "<p>Prix : 12 € — café</p>".encode("cp1252")  # € and — exist only in cp1252
    decoded = decode_body(body, 'text/html; charset="ISO-8859-1"')
    assert decoded.codec == "cp1252"
    assert "12 € — café" in decoded.text


def test_koi8_r_from_the_header():
    decoded = decode_body(f"<p>{RUSSIAN}</p>".encode("koi8-r"), "text/html; charset=KOI8-R")
    assert decoded.codec == "koi8-r"
    assert RUSSIAN in decoded.text


def test_shift_jis_from_meta_http_equiv():
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        f"</head><body>{JAPANESE}</body></html>"
    )
    decoded = decode_body(html.encode("shift_jis"), "text/html")
    assert (decoded.codec, decoded.source) == ("cp932", "meta")
    assert JAPANESE in decoded.text


def test_meta_charset_attribute_and_commented_out_meta():
    html = f"<!-- <meta charset=koi8-r> --><meta name=x><meta charset='windows-1251'>{RUSSIAN}"
    decoded = decode_body(html.encode("cp1251"), None)
    assert (decoded.codec, decoded.source) == ("cp1251", "meta")
    assert RUSSIAN in decoded.text


def test_meta_beyond_the_prescan_window_is_ignored():
    html = " " * 5000 + '<meta charset="koi8-r"><p>ok</p>'
    assert choose_charset(html.encode(), "text/html").source == "utf-8"


def test_unknown_header_label_falls_through_to_meta():
    body = '<meta charset="gb2312"><p>中文内容测试</p>'.encode("gb18030")
    choice = choose_charset(body, "text/html; charset=no-such-charset")
    assert (choice.codec, choice.source) == ("gb18030", "meta")


def test_non_text_codec_names_are_unknown_labels():
    assert codec_for_label("base64") is None
    assert codec_for_label("rot13") is None
    assert codec_for_label("utf-7") is None
    assert choose_charset(b"<p>x</p>", "text/html; charset=base64").source == "utf-8"


def test_bom_wins_even_over_the_header():
    body = "\ufeff<p>café</p>".encode()
    decoded = decode_body(body, "text/html; charset=iso-8859-1")
    assert (decoded.codec, decoded.source) == ("utf-8", "bom")
    assert decoded.text == "<p>café</p>"


def test_utf16_bom():
    decoded = decode_body("<p>naïve</p>".encode("utf-16"), "text/html")
    assert decoded.source == "bom"
    assert decoded.text == "<p>naïve</p>"


def test_utf16_meta_label_means_utf8():
    choice = choose_charset('<meta charset="utf-16"><p>é</p>'.encode(), None)
    assert (choice.codec, choice.source) == ("utf-8", "meta")


def test_xml_declaration():
    body = f'<?xml version="1.0" encoding="ISO-8859-1"?><rss><title>{FRENCH}</title></rss>'
    decoded = decode_body(body.encode("cp1252"), "application/rss+xml")
    assert (decoded.codec, decoded.source) == ("cp1252", "xml-declaration")
    assert FRENCH in decoded.text


def test_valid_utf8_without_declaration():
    assert choose_charset(f"<p>{JAPANESE}</p>".encode(), "text/html").source == "utf-8"


def test_utf8_cut_mid_character_by_the_size_cap_is_still_utf8():
    body = "<p>café €".encode()[:-1]
    decoded = decode_body(body, None)
    assert decoded.codec == "utf-8"
    assert decoded.text.startswith("<p>café")


def test_detection_of_undeclared_legacy_bytes():
    body = (f"<p>{FRENCH}</p>" * 3).encode("cp1252")
    decoded = decode_body(body, "text/html")
    assert decoded.source == "detected"
    assert FRENCH in decoded.text


def test_markup_declarations_are_ignored_for_plain_text():
    body = b'<meta charset="koi8-r"> plain'
    assert choose_charset(body, "text/plain", markup=False).source == "utf-8"


def test_undecodable_bytes_become_replacement_characters():
    decoded = decode_body(b"<p>ok \xff\xfe\xfd</p>", "text/html; charset=utf-8")
    assert decoded.text.startswith("<p>ok ")
    assert "\ufffd" in decoded.text


def test_labels_map_like_browsers():
    assert codec_for_label("latin1") == "cp1252"
    assert codec_for_label("US-ASCII") == "cp1252"
    assert codec_for_label("gb2312") == "gb18030"
    assert codec_for_label("EUC-KR") == "cp949"
    assert codec_for_label("shift_jis") == "cp932"
    assert codec_for_label(" 'utf8' ") == "utf-8"
    assert codec_for_label("") is None
