/**
 * `WWW-Authenticate` challenges (RFC 9110 §11.6.1) as registries send them:
 * `Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"`
 * or `Basic realm="Registry Realm"`. Several challenges may share one header.
 * Pure: text in, challenges out.
 */

export interface Challenge {
    /** The auth scheme, lowercased (`basic`, `bearer`). */
    scheme: string;
    /** Auth parameters with lowercased names. */
    params: Record<string, string>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;
/** `name=` followed by a quoted string or a token: an auth-param, not a token68 with padding. */
const PARAM_START = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=[ \t]*(?:"|[!#$%&'*+\-.^_`|~0-9A-Za-z])/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*(?=[ \t]*(?:,|$))/;

export function parseChallenges(header: string): Challenge[] {
    const challenges: Challenge[] = [];
    let rest = header;
    const take = (pattern: RegExp): string | undefined => {
        const match = pattern.exec(rest);
        if (match) {
            rest = rest.slice(match[0].length);
        }
        return match?.[0];
    };
    const quoted = (): string => {
        let value = "";
        let i = 1;
        for (; i < rest.length && rest[i] !== '"'; i++) {
            if (rest[i] === "\\" && i + 1 < rest.length) {
                i++;
            }
            value += rest[i];
        }
        rest = rest.slice(i + 1);
        return value;
    };
    for (;;) {
        take(/^[\s,]*/);
        const scheme = take(TOKEN);
        if (scheme === undefined) {
            return challenges;
        }
        const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
        challenges.push(challenge);
        take(/^[ \t]*/);
        if (!PARAM_START.test(rest)) {
            const token68 = take(TOKEN68);
            if (token68 !== undefined) {
                challenge.params[""] = token68;
            }
            continue;
        }
        // auth-params, separated by commas, until something that is not `name=` (the next challenge).
        while (PARAM_START.test(rest)) {
            const name = take(TOKEN) as string;
            take(/^[ \t]*=[ \t]*/);
            challenge.params[name.toLowerCase()] = rest.startsWith('"') ? quoted() : (take(TOKEN) ?? "");
            const separator = /^[ \t]*,[\s,]*/.exec(rest);
            if (separator === null || !PARAM_START.test(rest.slice(separator[0].length))) {
                break;
            }
            rest = rest.slice(separator[0].length);
        }
    }
}

/** Renders challenges back to header text (quoted values), for tests and messages. */
export function formatChallenges(challenges: ReadonlyArray<Challenge>): string {
    return challenges
        .map((c) => {
            const params = Object.entries(c.params).filter(([name]) => name !== "");
            const token68 = c.params[""];
            const body =
                token68 !== undefined
                    ? token68
                    : params.map(([name, value]) => `${name}="${value.replace(/(["\\])/g, "\\$1")}"`).join(", ");
            return body === "" ? c.scheme : `${c.scheme} ${body}`;
        })
        .join(", ");
}
