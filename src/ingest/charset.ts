/**
 * A source file's bytes as text. UTF-8 first, strictly (a byte it cannot read is an error, never
 * U+FFFD in the stored text); a page that is not UTF-8 may name its own encoding, as older HTML
 * does (libxslt's manual: `<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">`),
 * and is then read in it, or, naming none, in windows-1252, as a browser reads it (TextDecoder
 * follows the WHATWG Encoding labels: ISO-8859-1 is read as windows-1252). Markdown and reST
 * name no encoding, so they are UTF-8 or refused.
 */

/** Where a page names its encoding, in its first 1024 bytes as a browser's prescan looks: `<meta charset>`, http-equiv's content, an XML declaration. */
const DECLARED = [/<meta[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)/i, /<\?xml[^>]*?encoding\s*=\s*["']([\w.:-]+)/i];

/**
 * The encoding of an HTML page that is not UTF-8: the one it declares, else windows-1252, which
 * browsers assume of a page that declares none (HTML's default for Western locales; libxslt's
 * xslt.html is such a page, Latin-1 names in its news).
 */
export function htmlCharset(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  for (const pattern of DECLARED) {
    const found = pattern.exec(head);
    if (found) return found[1];
  }
  return 'windows-1252';
}

/**
 * The text of `bytes`: UTF-8, else the encoding `charsetOf` names (when given: the format's own
 * rule) if TextDecoder knows it; null when neither reads them.
 */
export function decodeSource(bytes: Uint8Array, charsetOf?: (bytes: Uint8Array) => string): string | null {
  const decode = (label: string): string | null => {
    try {
      return new TextDecoder(label, { fatal: true }).decode(bytes);
    } catch {
      return null; // not that encoding, or a label TextDecoder does not know
    }
  };
  const utf8 = decode('utf-8');
  if (utf8 !== null) return utf8;
  const label = charsetOf?.(bytes);
  return label ? decode(label) : null;
}
