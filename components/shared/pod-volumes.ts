/**
 * A Pod's volumes and a container's volume mounts (kubernetes/api core/v1/types.go Volume,
 * VolumeMount), as far as the program and the admission server read them; every other field is
 * carried as it is. Types only: the server imports them with `import type`, so its image does not
 * carry this module.
 */

export interface VolumeMount {
    name: string;
    mountPath: string;
    subPath?: string;
    readOnly?: boolean;
    [field: string]: unknown;
}

export interface Volume {
    name: string;
    [field: string]: unknown;
}
