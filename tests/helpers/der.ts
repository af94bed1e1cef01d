/**
 * A minimal DER (ASN.1) writer and reader, enough to build and read X.509 certificates and
 * PKCS#10 requests for the tls-provider stand-in (`tls-signer.ts`). Test support only.
 */

export const TAG = {
    boolean: 0x01,
    integer: 0x02,
    bitString: 0x03,
    octetString: 0x04,
    null: 0x05,
    oid: 0x06,
    utf8String: 0x0c,
    sequence: 0x30,
    set: 0x31,
    printableString: 0x13,
    ia5String: 0x16,
    utcTime: 0x17,
    generalizedTime: 0x18,
} as const;

function lengthBytes(length: number): Buffer {
    if (length < 0x80) {
        return Buffer.from([length]);
    }
    const bytes: number[] = [];
    for (let n = length; n > 0; n >>= 8) {
        bytes.unshift(n & 0xff);
    }
    return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
    return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(TAG.sequence, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(TAG.set, Buffer.concat(items));
export const octetString = (content: Buffer): Buffer => tlv(TAG.octetString, content);
export const bitString = (content: Buffer, unusedBits = 0): Buffer =>
    tlv(TAG.bitString, Buffer.concat([Buffer.from([unusedBits]), content]));
export const boolean = (value: boolean): Buffer => tlv(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
/** `[n]` EXPLICIT (constructed, wrapping `content`). */
export const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
/** `[n]` IMPLICIT primitive (e.g. a SAN dNSName). */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 + n, content);

/** A non-negative INTEGER from big-endian bytes (minimal, with a 0x00 when the high bit is set). */
export function integer(bytes: Buffer): Buffer {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) {
        start++;
    }
    const trimmed = bytes.subarray(start);
    return tlv(TAG.integer, trimmed[0] & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export function oid(dotted: string): Buffer {
    const arcs = dotted.split(".").map(Number);
    const bytes: number[] = [40 * arcs[0] + arcs[1]];
    for (const arc of arcs.slice(2)) {
        const chunk: number[] = [arc & 0x7f];
        for (let n = arc >>> 7; n > 0; n >>>= 7) {
            chunk.unshift((n & 0x7f) | 0x80);
        }
        bytes.push(...chunk);
    }
    return tlv(TAG.oid, Buffer.from(bytes));
}

/** A directory string as Go's encoding/asn1 writes it: PrintableString when it can, else UTF8String. */
export function directoryString(value: string): Buffer {
    return /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(value)
        ? tlv(TAG.printableString, Buffer.from(value, "ascii"))
        : tlv(TAG.utf8String, Buffer.from(value, "utf8"));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5). */
export function time(date: Date): Buffer {
    const iso = date.toISOString().replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
    return date.getUTCFullYear() < 2050
        ? tlv(TAG.utcTime, Buffer.from(`${iso.slice(2)}Z`, "ascii"))
        : tlv(TAG.generalizedTime, Buffer.from(`${iso}Z`, "ascii"));
}

export interface Node {
    tag: number;
    /** The whole TLV. */
    raw: Buffer;
    /** The content octets. */
    content: Buffer;
}

/** Reads the TLV at `offset` of `buffer`. */
export function read(buffer: Buffer, offset = 0): Node {
    const tag = buffer[offset];
    let length = buffer[offset + 1];
    let header = 2;
    if (length & 0x80) {
        const count = length & 0x7f;
        length = 0;
        for (let i = 0; i < count; i++) {
            length = (length << 8) | buffer[offset + 2 + i];
        }
        header += count;
    }
    return {
        tag,
        raw: buffer.subarray(offset, offset + header + length),
        content: buffer.subarray(offset + header, offset + header + length),
    };
}

/** The TLVs inside a constructed node. */
export function children(node: Node): Node[] {
    const out: Node[] = [];
    for (let offset = 0; offset < node.content.length;) {
        const child = read(node.content, offset);
        out.push(child);
        offset += child.raw.length;
    }
    return out;
}

export function oidText(node: Node): string {
    const bytes = node.content;
    const arcs = [Math.floor(bytes[0] / 40), bytes[0] % 40];
    let value = 0;
    for (const byte of bytes.subarray(1)) {
        value = (value << 7) | (byte & 0x7f);
        if (!(byte & 0x80)) {
            arcs.push(value);
            value = 0;
        }
    }
    return arcs.join(".");
}

export function pem(label: string, der: Buffer): string {
    const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
    return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

export function unpem(text: string): Buffer {
    return Buffer.from(text.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
}
