/**
 * The host's system trees every bubblewrap sandbox mounts read-only, declared or not (dynamically linked
 * programs need them; /usr-merged distributions make most of them symlinks). Here, in config, so that the
 * sandbox's mounts and the load-time check of what they expose of the gateway's own files read one list.
 */
export const SYSTEM_TREES: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
