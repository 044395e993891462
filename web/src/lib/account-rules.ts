/** Minimum password length (spec 01 §9). */
export const PASSWORD_MIN_LENGTH = 8;
/** Maximum password length (spec 01 §9: the placeholder and message table). */
export const PASSWORD_MAX_LENGTH = 20;
/** Maximum username length at registration (spec 01 §9). */
export const USERNAME_MAX_LENGTH = 12;
