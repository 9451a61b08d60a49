-- job_submit.lua: Astraeus's fencing check in slurmctld (JobSubmitPlugins=lua; this file beside
-- slurm.conf). docs/slurm.md, "Several service replicas".
--
-- Replicas of `astraeus serve` on one PostgreSQL database lead by a lease whose generation goes
-- up at every take-over. The leader stamps every job it submits or updates with its generation
-- (AdminComment "astraeus-generation=N", in the same request as the update), and a new leader
-- stamps each job it adopts before commanding it. This check refuses an update whose generation
-- is below the job's stamp: a deposed leader's late placement, release or hold of a job that the
-- new leader commands is refused by slurmctld itself, under its job lock (no race).
-- Updates without a stamp (administrators, other tools) and every other job pass unchanged.
-- A site with its own job_submit.lua adds the body of slurm_job_modify below to its own.

local function astraeus_generation(s)
   if s == nil then return nil end
   local g = string.match(s, "astraeus%-generation=(%d+)")
   if g == nil then return nil end
   return tonumber(g)
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   local new = astraeus_generation(job_desc.admin_comment)
   local stamped = astraeus_generation(job_rec.admin_comment)
   if new ~= nil and stamped ~= nil and new < stamped then
      slurm.log_info("astraeus fence: job %u: update with lease generation %d refused (stamped %d)",
                     job_rec.job_id, new, stamped)
      return slurm.ERROR
   end
   return slurm.SUCCESS
end

slurm.log_info("astraeus fence: job_submit.lua loaded")
return slurm.SUCCESS
