import type { EndpointView } from './endpoint-view.js';
import { learn, TemplateOwners } from './owner-books.js';

/** What UriOwners needs of its endpoint (EndpointView). */
type OwnerBook = Pick<EndpointView, 'pool' | 'learnUri' | 'ownerOfUri' | 'learnTemplate' | 'ownerOfTemplate'>;

/**
 * Who owns each resource URI and template, as one session routes it. A URI or template a shared upstream
 * listed is the endpoint's to know (every session reaches that instance); one listed by an instance not
 * every session shares (the session's own, its tenant's, its user's: their resources are often the
 * client's own data) is this session's alone, and comes first for it. Learned for the whole endpoint, a
 * client whose own notes server listed a URI (or a template, `users://{name}/profile`) another upstream
 * serves sent every other session's read of it to that other session's own notes server, "not found"
 * there, for as long as it listed again now and then.
 */
export class UriOwners {
  readonly #endpoint: OwnerBook;
  readonly #own = new Map<string, string>();
  readonly #templates = new TemplateOwners();

  constructor(endpoint: OwnerBook) {
    this.#endpoint = endpoint;
  }

  #shared(upstream: string): boolean {
    return this.#endpoint.pool(upstream)?.config.sharing === 'shared';
  }

  /** `upstream` listed `uri` to this session. */
  learn(uri: string, upstream: string): void {
    if (this.#shared(upstream)) this.#endpoint.learnUri(uri, upstream);
    else learn(this.#own, uri, upstream);
  }

  /** `upstream` listed the resource template `template` to this session. */
  learnTemplate(template: string, upstream: string): void {
    if (this.#shared(upstream)) this.#endpoint.learnTemplate(template, upstream);
    else this.#templates.learn(template, upstream);
  }

  /** A listed URI (this session's, then the endpoint's), else by the templates (this session's win a tie). */
  ownerOf(uri: string): string | undefined {
    return this.#own.get(uri) ?? this.#endpoint.ownerOfUri(uri, this.#templates);
  }

  /** Who listed the template (for a completion on it): this session's own instance first. */
  ownerOfTemplate(template: string): string | undefined {
    return this.#templates.ownerOf(template) ?? this.#endpoint.ownerOfTemplate(template);
  }

  /** A reload rebound the session: what it learned may name an upstream that is gone (as the endpoint forgets its own). */
  clear(): void {
    this.#own.clear();
    this.#templates.clear();
  }
}
