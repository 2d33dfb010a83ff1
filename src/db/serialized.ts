// A body that is already the contract's JSON: the pets table keeps each pet's JSON
// (migrations/1763700000007_pets-as-json.sql), and a page of pets is those strings joined
// by PostgreSQL. The route sends the text as it is (src/routes/middleware.ts) instead of
// parsing rows into objects only to serialize them again.
//
// `T` is the body the text stands for, so a handler's answer still has to be declared for
// its status: `Serialized<Pet>` is not an Error body. That the text matches `T` is not
// something the compiler can see; test/wire/pet-json.test.ts holds the database's JSON
// against the contract's serializer, and every API test checks answers against the contract.
export class Serialized<T> {
  /** Never set: ties the text to the type of the body it is the JSON of. */
  declare readonly of?: T;

  constructor(readonly json: string) {}

  /** Anything that serializes an answer holding it (the idempotency store, a log) gets the body it stands for. */
  toJSON(): unknown {
    return JSON.parse(this.json);
  }
}
