import { operationPath } from '../contract/spec.js';
import type { Handler } from '../contract/handler.js';
import type { Services } from './services.js';

const petPath = operationPath('getPet');

export const createPet: Handler<'createPet', Services> = async ({ body }, { store }) => {
  const pet = await store.createPet(body);
  return { status: 201, body: pet, headers: { Location: petPath.replace('{petId}', String(pet.id)) } };
};
