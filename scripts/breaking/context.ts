// What a comparison carries along: both documents, the date the sunset policy is judged
// on, and the findings so far (one per rule and place, however many operations share it).
import { type Node, nearest } from './document.js';
import { ruleOf } from './rules.js';

export interface Finding {
  rule: string;
  /** JSON pointer to where the change is: into the head document, or into the base one when the thing was removed. */
  pointer: string;
  side: 'head' | 'base';
  /**
   * For something removed (side `base`): the nearest place in the head document where it is
   * missing (the map or list it was taken from, or the schema that no longer has it).
   */
  near?: string;
  message: string;
  /** Whom it breaks, from the rule catalogue. */
  breaks: string;
}

export interface Place {
  pointer: string;
  side: 'head' | 'base';
  near?: string;
}

export const inHead = (pointer: string): Place => ({ pointer, side: 'head' });
/** Something removed: where it is in the base document, and where in the head it is missing from. */
export const inBase = (pointer: string, near: string): Place => ({ pointer, side: 'base', near });

export class Context {
  private readonly found = new Map<string, Finding>();
  private readonly visited = new Set<string>();

  constructor(
    readonly base: Node,
    readonly head: Node,
    /** YYYY-MM-DD */
    readonly today: string,
  ) {}

  report(rule: string, place: Place, message: string): void {
    const { breaks } = ruleOf(rule);
    const key = `${rule} ${place.side} ${place.pointer}`;
    // `near` is cut back to what the head really has, so that it always names a line there.
    const near = place.near === undefined ? {} : { near: nearest(this.head, place.near) };
    if (!this.found.has(key)) this.found.set(key, { rule, ...place, ...near, message, breaks });
  }

  /** False when this pair was compared already: shared components are walked once, and cycles end. */
  firstVisit(key: string): boolean {
    if (this.visited.has(key)) return false;
    this.visited.add(key);
    return true;
  }

  get findings(): Finding[] {
    return [...this.found.values()];
  }
}
